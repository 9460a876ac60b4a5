// Every KAOS sample (test/fixtures/samples/, copies of KAOS's own examples) must be admitted
// unchanged, and defaulting must be stable on it.
import { readdir, readFile } from 'node:fs/promises';
import t from 'tap';
import { parseAllDocuments } from 'yaml';
import { defaultObject } from '../../../src/api/defaulting/default-object.ts';
import { DEFAULTED_ANNOTATION, isKaosKind, type KaosKind } from '../../../src/api/kinds.ts';
import { isKubeObject } from '../../../src/api/kube-object.ts';
import type { KubeObject } from '../../../src/api/lookup.ts';
import { validateObject } from '../../../src/api/validation/validate-object.ts';
import { CONFIG, referencesIn } from './objects.ts';

const samplesDir = new URL('../../fixtures/samples/', import.meta.url);

async function loadYaml(url: URL | string): Promise<unknown[]> {
  return parseAllDocuments(await readFile(url, 'utf8')).flatMap((d) => (Array.isArray(d) ? [] : [d.toJS()]));
}

async function loadSample(file: string): Promise<KubeObject[]> {
  const docs = await loadYaml(new URL(file, samplesDir));
  return docs.filter((d): d is KubeObject => isKubeObject(d) && d.kind !== 'Namespace');
}


/** The original samples, and KAOS v0.1.3's (the newer shapes, docs/api.md, "Newer KAOS shapes") in their own folder. */
const RELEASES = ['', 'kaos-v0.1.3/'];
const yamlIn = async (dir: URL | string): Promise<string[]> => (await readdir(dir)).filter((f) => f.endsWith('.yaml')).sort();
const files = (await Promise.all(RELEASES.map(async (r) => (await yamlIn(new URL(r, samplesDir))).map((f) => r + f)))).flat();

t.test('the fixtures hold the KAOS samples', async (t) => {
  t.ok(files.length >= 6);
  for (const release of RELEASES) {
    for (const f of ['1-simple-echo-agent.yaml', '2-multi-agent-mcp.yaml', '4-dev-ollama-proxy-agent.yaml']) t.ok(files.includes(release + f), release + f);
  }
});

for (const file of files) {
  t.test(file, async (t) => {
    const objects = await loadSample(file);
    t.ok(objects.length >= 3, 'has KAOS objects');
    for (const object of objects) {
      const kind = object.kind;
      if (!isKaosKind(kind)) throw new Error(`unexpected kind ${String(kind)}`);
      const label = `${kind} ${object.metadata?.name}`;
      const references = kind === 'Agent' ? referencesIn(objects, object.spec) : undefined;
      const ctx = { referencePolicy: 'Enforce' as const, references };

      t.same(validateObject(kind, object, ctx), { errors: [], warnings: [] }, `${label} is valid as written`);

      const modelAPI = references?.modelAPIs.values().next().value;
      const defaulted = defaultObject(kind, object, { config: CONFIG, modelAPI });
      t.same(validateObject(kind, defaulted.object, ctx), { errors: [], warnings: [] }, `${label} is valid once defaulted`);
      // Samples give MODEL_NAME or spec.model; the v0.1.3 Agents are newer-shape and have a config, which gets toolCallMode.
      const chosen = kind === 'Agent' && file.startsWith('kaos-v0.1.3/') ? ['spec.config.toolCallMode', 'spec.container.image'] : ['spec.container.image'];
      t.same(defaulted.defaulted, chosen, `${label}: only ${chosen.join(' and ')} chosen`);
      t.equal(defaulted.object.metadata?.annotations?.[DEFAULTED_ANNOTATION], chosen.join(','));
      const again = defaultObject(kind, defaulted.object, { config: CONFIG, modelAPI, oldObject: defaulted.object });
      t.same(again.object, defaulted.object, `${label}: defaulting is idempotent`);
    }
  });
}

t.test('broken variants of the samples: every error, exact text, in order', async (t) => {
  const cases = await loadYaml(new URL('../../fixtures/invalid-objects.yaml', import.meta.url));
  t.ok(cases.length >= 5);
  for (const c of cases) {
    const { case: name, sample, object, errors } = c as { case: string; sample: string; object: KubeObject; errors: string[] };
    const existing = (await loadSample(sample)).filter((o) => !(o.kind === object.kind && o.metadata?.name === object.metadata?.name));
    const kind = object.kind as KaosKind;
    const references = kind === 'Agent' ? referencesIn(existing, object.spec) : undefined;
    const result = validateObject(kind, object, { referencePolicy: 'Enforce', references });
    t.same(result.errors.map((e) => e.errorString()), errors, name);
  }
});
