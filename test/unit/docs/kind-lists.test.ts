// Lists of kinds in the docs are checked against the code that states them: the KAOS kinds
// (src/api/kinds.ts) and each kind's children and dependencies (src/cluster/kind-table.ts). A list
// that names three or more KAOS kinds, or four or more kinds of children, must be a whole set the
// code knows — every kind, the workload kinds, the kinds objects depend on, all children, or one
// kind's children — once the kinds named right beside it (a list split by a remark, "an Agent
// whose … , every ModelAPI, MCPServer and MemoryStore") are counted in. So a new kind or child
// that a list leaves out fails here. `kubectl get a,b,c` resource lists are checked the same way.
// The CHANGELOG and docs/history/ are history (what the operator did then, the runs): both
// are left out.
import { readFileSync } from 'node:fs';
import { relative } from 'node:path';
import t from 'tap';
import { markdownFiles } from './markdown-files.ts';
import { KIND_NAMES, KINDS, WORKLOAD_KINDS, type KaosKind } from '../../../src/api/kinds.ts';
import { KIND_TABLE } from '../../../src/cluster/kind-table.ts';
import { CONTAINER_NAME } from '../../../src/render/names.ts';
import { ROOT } from '../../../scripts/image/build.ts';

const HISTORY = new Set(['CHANGELOG.md', 'docs/history/benchmarks.md']);
/** How far beside a list a kind still belongs to it. */
const WINDOW = 120;

const sortedSet = (items: Iterable<string>): string => [...new Set(items)].sort().join(',');

/** A vocabulary of kinds: the names a list is made of, and the sets a whole list may be. */
export interface Vocabulary {
  readonly label: string;
  readonly names: readonly string[];
  /** A list of fewer distinct names is no list of this vocabulary. */
  readonly atLeast: number;
  readonly wholeSets: ReadonlyMap<string, string>;
}

/**
 * `Name`, `Names`, `` `Name` ``, with an article, a possessive or an owner before it ("an Agent's
 * ServiceAccount", "Envoy Gateway SecurityPolicies") and a remark in parentheses after it.
 */
function itemPattern(names: readonly string[]): string {
  const name = `(?:${names.join('|')})(?:s|es)?`;
  return `(?:(?:a|an|the|its|their|every|each)\\s+)?(?:(?:Agent's|MemoryStore's|Envoy Gateway|LiteLLM|own)\\s+)*\`?${name}\`?(?:\\s+\\([^)\\n]{0,60}\\))?`;
}
const SEPARATOR = '(?:,\\s+(?:and\\s+|or\\s+)?|\\s+(?:and|or)\\s+|\\s*/\\s*)';

/** Every list of `vocabulary` in `text`, with the kinds it names and the kinds named beside it. */
export function listsIn(text: string, vocabulary: Vocabulary): Array<{ list: string; named: string[]; beside: string[] }> {
  const item = itemPattern(vocabulary.names);
  const nameRe = new RegExp(`\\b(${vocabulary.names.join('|')})(?:s|es)?\\b`, 'g');
  // A plural in -ies names its kind in -y (NetworkPolicies).
  const kindsOf = (s: string) => [...s.matchAll(nameRe)].map((m) => (m[1] ?? '').replace(/ie$/, 'y'));
  const out: Array<{ list: string; named: string[]; beside: string[] }> = [];
  const flat = text.replace(/\s*\n\s*/g, ' ');
  for (const m of flat.matchAll(new RegExp(`\\b${item}(?:${SEPARATOR}${item})+`, 'g'))) {
    const named = kindsOf(m[0]);
    if (new Set(named).size < vocabulary.atLeast) continue;
    const at = m.index ?? 0;
    const beside = kindsOf(flat.slice(Math.max(0, at - WINDOW), at + m[0].length + WINDOW));
    out.push({ list: m[0], named, beside });
  }
  return out;
}

/** Whether a list is whole: what it names, with what is named beside it, covers a set the code knows. */
export function wholeSetOf(list: { named: string[]; beside: string[] }, vocabulary: Vocabulary): string | undefined {
  const named = new Set(list.named);
  const all = new Set([...list.named, ...list.beside]);
  for (const [set, what] of vocabulary.wholeSets) {
    const members = set.split(',');
    // Exactly the set by itself, or the set completed by the kinds beside it.
    if (sortedSet(named) === set) return what;
    if (members.every((k) => all.has(k)) && [...named].every((k) => members.includes(k))) return what;
  }
  return undefined;
}

const kaosKinds: Vocabulary = (() => {
  const sets = new Map<string, string>([
    [sortedSet(KINDS), 'every KAOS kind'],
    [sortedSet(WORKLOAD_KINDS), 'the workload kinds'],
  ]);
  // What objects depend on besides their own kind (an Agent's peers): the kind table's dependencies.
  const dependencies = Object.entries(KIND_TABLE.kinds).flatMap(([kind, entry]) =>
    Object.values(entry.dependsOn).map((d) => d.kind).filter((d): d is KaosKind => (KINDS as readonly string[]).includes(d) && d !== kind),
  );
  sets.set(sortedSet(dependencies), 'the kinds objects depend on');
  return { label: 'KAOS kinds', names: [...KINDS], atLeast: 3, wholeSets: sets };
})();

const childKinds: Vocabulary = (() => {
  const sets = new Map<string, string>([[sortedSet(Object.keys(KIND_TABLE.owned)), 'every kind of child']]);
  for (const [kind, entry] of Object.entries(KIND_TABLE.kinds)) {
    if (entry.children.length > 0) sets.set(sortedSet(entry.children.map((c) => c.kind)), `the children of ${kind}`);
  }
  // Longest first: PersistentVolumeClaim before a shorter name it starts with.
  const names = Object.keys(KIND_TABLE.owned).sort((a, b) => b.length - a.length);
  return { label: 'kinds of children', names: names.map((n) => n.replace(/y$/, '(?:y|ie)')), atLeast: 4, wholeSets: sets };
})();

const pages = markdownFiles(ROOT)
  .map((file) => ({ file: relative(ROOT, file), text: readFileSync(file, 'utf8') }))
  .filter((p) => !HISTORY.has(p.file));

t.test('the list finder reads lists as written', async (t) => {
  const found = listsIn('the API (`kaos.tools/v1alpha1` Agent, ModelAPI, MCPServer — the\nreference)', kaosKinds);
  t.same(found.map((f) => f.named), [['Agent', 'ModelAPI', 'MCPServer']]);
  t.equal(wholeSetOf(found[0] ?? { named: [], beside: [] }, kaosKinds), undefined, 'three of five kinds by themselves are no whole set');
  const split = listsIn('an Agent whose expose is not false, every ModelAPI, MCPServer and MemoryStore', kaosKinds);
  t.equal(wholeSetOf(split[0] ?? { named: [], beside: [] }, kaosKinds), 'the workload kinds', 'the kind named beside completes it');
  const deps = listsIn('A missing ModelAPI, MCPServer or MemoryStore is a warning', kaosKinds);
  t.equal(wholeSetOf(deps[0] ?? { named: [], beside: [] }, kaosKinds), 'the kinds objects depend on');
  const children = listsIn('its children (Deployment, Service, a LiteLLM ConfigMap, a PersistentVolumeClaim, an HTTPRoute, an\nAgent\'s own ServiceAccount) and a status', childKinds);
  t.same(children.map((c) => c.named), [['Deployment', 'Service', 'ConfigMap', 'PersistentVolumeClaim', 'HTTPRoute', 'ServiceAccount']], 'articles, owners and line breaks inside a list');
  t.equal(wholeSetOf(children[0] ?? { named: [], beside: [] }, childKinds), undefined, 'six of nine kinds of children are no whole set');
  const plural = listsIn('Deployments, Services, ConfigMaps, NetworkPolicies and PodDisruptionBudgets', childKinds);
  t.same(plural[0]?.named, ['Deployment', 'Service', 'ConfigMap', 'NetworkPolicy', 'PodDisruptionBudget'], 'plurals, -ies included');
});

for (const vocabulary of [kaosKinds, childKinds]) {
  t.test(`every list of ${vocabulary.label} in the docs is a whole set of the kind table`, async (t) => {
    let checked = 0;
    for (const { file, text } of pages) {
      for (const list of listsIn(text, vocabulary)) {
        checked++;
        t.ok(wholeSetOf(list, vocabulary), `${file}: "${list.list}" names ${sortedSet(list.named)}, not ${[...vocabulary.wholeSets.values()].join(' or ')}`);
      }
    }
    t.ok(checked >= 3, `lists checked: ${checked}`);
  });
}

// A list over all namespaces stands for everything (a lint or a check of the cluster); one in a
// namespace may show what an example created.
t.test('every kubectl list of KAOS resources over all namespaces names the five kinds, or the four that run a workload', async (t) => {
  const plurals = KINDS.map((k) => KIND_NAMES[k].plural);
  const five = sortedSet(plurals);
  const four = sortedSet(WORKLOAD_KINDS.map((k) => KIND_NAMES[k].plural));
  let checked = 0;
  for (const { file, text } of pages) {
    for (const m of text.matchAll(/kubectl get ([a-z.,]+)([^\n|`]*)/g)) {
      if (!/(^|\s)(-A|--all-namespaces)\b/.test(m[2] ?? '')) continue;
      const resources = (m[1] ?? '').split(',').filter((r) => r !== '');
      const kaos = resources.map((r) => r.replace(/\.kaos\.tools$/, '')).filter((r) => plurals.includes(r));
      if (kaos.length < 2) continue;
      checked++;
      t.ok([five, four].includes(sortedSet(kaos)), `${file}: kubectl get ${m[1] ?? ''}`);
    }
  }
  t.ok(checked >= 1, `kubectl lists checked: ${checked}`);
});

t.test('configuration.md names the main container of every workload kind', async (t) => {
  const page = pages.find((p) => p.file === 'docs/configuration.md')?.text ?? '';
  const sentence = /naming the main container \(([^)]*)\)/.exec(page.replace(/\s*\n\s*/g, ' '))?.[1] ?? '';
  t.same(sortedSet([...sentence.matchAll(/`([^`]+)`/g)].map((m) => m[1] ?? '')), sortedSet(Object.values(CONTAINER_NAME)));
});
