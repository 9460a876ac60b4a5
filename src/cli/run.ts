// `kaos-operator lint` and `kaos-operator default`: the command line around the webhooks' own
// handlers. I/O comes in through CliIO, so tests can run it in-process.
import { parseArgs } from 'node:util';
import { stringify } from 'yaml';
import { ConfigError, loadConfig, type Config } from '../config/config.ts';
import { REFERENCE_POLICIES, type ReferencePolicy } from '../api/kinds.ts';
import type { KubeObject } from '../api/lookup.ts';
import { clusterSnapshot, ClusterUnavailable, kubeconfigPath } from './cluster.ts';
import { USAGE } from './help.ts';
import { createHandlers, judge } from './judge.ts';
import { expandPaths, InputError, readManifestFile, type Manifest } from './manifests.ts';
import { createStructuralPodSpecCheck } from './pod-spec-structure.ts';
import { formatJson, formatText, type Report } from './report.ts';
import { harnessRegistryInManifests, readRuntimesFile, registryInManifests } from './runtimes.ts';
import { SetLookup } from './set-lookup.ts';
import { prepareSet, type Finding } from './set.ts';
import { errorMessage } from '../leaves/error-message.ts';

export interface CliIO {
  stdout(text: string): void;
  stderr(text: string): void;
  readStdin(): Promise<string>;
  env: Readonly<Record<string, string | undefined>>;
}

export const EXIT_CLEAN = 0;
export const EXIT_ERRORS = 1;
export const EXIT_FAILED = 2;

class UsageError extends Error {}

interface Options {
  command: 'lint' | 'default';
  paths: string[];
  namespace: string;
  referencePolicy?: ReferencePolicy;
  cluster: boolean;
  /** --runtimes: a file with the MCP runtime registry. */
  runtimes?: string;
  output: 'text' | 'json' | 'yaml';
}

export async function run(argv: readonly string[], io: CliIO): Promise<number> {
  let options: Options | 'help';
  try {
    options = parseOptions(argv);
  } catch (err) {
    io.stderr(`kaos-operator: ${errorMessage(err)}\n\n${USAGE}`);
    return EXIT_FAILED;
  }
  if (options === 'help') {
    io.stdout(USAGE);
    return EXIT_CLEAN;
  }
  try {
    return await execute(options, io);
  } catch (err) {
    if (err instanceof InputError || err instanceof ClusterUnavailable || err instanceof ConfigError) {
      io.stderr(`kaos-operator: ${err.message}\n`);
      return EXIT_FAILED;
    }
    throw err;
  }
}

function parseOptions(argv: readonly string[]): Options | 'help' {
  let parsed;
  try {
    parsed = parseArgs({
      args: [...argv],
      allowPositionals: true,
      options: {
        namespace: { type: 'string', short: 'n' },
        'reference-policy': { type: 'string' },
        cluster: { type: 'boolean' },
        runtimes: { type: 'string' },
        output: { type: 'string', short: 'o' },
        help: { type: 'boolean', short: 'h' },
      },
    });
  } catch (err) {
    throw new UsageError(errorMessage(err));
  }
  const { values, positionals } = parsed;
  const [command, ...paths] = positionals;
  if (values.help === true || command === 'help' || command === undefined) {
    if (command === undefined && values.help !== true) throw new UsageError('a command is required: lint or default');
    return 'help';
  }
  if (command !== 'lint' && command !== 'default') throw new UsageError(`unknown command "${command}": use lint or default`);
  if (paths.length === 0) throw new UsageError(`${command}: name at least one file, directory, or - for stdin`);
  const output = values.output ?? (command === 'lint' ? 'text' : 'yaml');
  const outputs = command === 'lint' ? ['text', 'json'] : ['yaml'];
  if (!outputs.includes(output)) throw new UsageError(`${command}: --output must be ${outputs.join(' or ')}, got "${output}"`);
  const policy = values['reference-policy'];
  if (policy !== undefined && !(REFERENCE_POLICIES as readonly string[]).includes(policy)) {
    throw new UsageError(`--reference-policy must be ${REFERENCE_POLICIES.join(' or ')}, got "${policy}"`);
  }
  const namespace = values.namespace ?? 'default';
  if (!/^[a-z0-9]([-a-z0-9]*[a-z0-9])?$/.test(namespace) || namespace.length > 63) {
    throw new UsageError(`--namespace must be a namespace name (a DNS-1123 label), got "${namespace}"`);
  }
  return {
    command,
    paths,
    namespace,
    ...(policy === undefined ? {} : { referencePolicy: policy as ReferencePolicy }),
    cluster: values.cluster === true,
    ...(values.runtimes === undefined ? {} : { runtimes: values.runtimes }),
    output: output as Options['output'],
  };
}

async function execute(options: Options, io: CliIO): Promise<number> {
  const loaded = loadConfig(io.env);
  const config: Config = options.referencePolicy === undefined ? loaded : { ...loaded, referencePolicy: options.referencePolicy };

  const files = await expandPaths(options.paths);
  if (files.filter((f) => f === '-').length > 1) throw new InputError('- (stdin) may be given once');
  const manifests: Manifest[] = [];
  for (const file of files) manifests.push(...(await readManifestFile(file, io.readStdin)));

  const set = prepareSet(manifests, options.namespace);
  const lookup = new SetLookup();
  // The runtime registry: --runtimes, else one in the set, else (with --cluster) the cluster's.
  const runtimes = options.runtimes === undefined ? registryInManifests(manifests) : await readRuntimesFile(options.runtimes);
  // The harness runtime registry: one in the set, else (with --cluster) the cluster's.
  const harnessRuntimes = harnessRegistryInManifests(manifests);
  if (options.cluster) {
    const namespaces = [...new Set(set.entries.map((e) => e.identity.namespace))].sort();
    const snapshot = await clusterSnapshot(kubeconfigPath(io.env), namespaces, {
      ...(runtimes === undefined ? { runtimesNamespace: config.operatorNamespace } : {}),
      ...(harnessRuntimes === undefined ? { harnessNamespace: config.systemNamespace } : {}),
    });
    for (const note of snapshot.notes) io.stderr(`kaos-operator: note: ${note}\n`);
    lookup.addObjects(snapshot.objects).addNamespaces(snapshot.namespaces);
    if (snapshot.runtimes !== undefined) lookup.setRuntimes(snapshot.runtimes);
    if (snapshot.harnessRuntimes !== undefined) lookup.setHarnessRuntimes(snapshot.harnessRuntimes);
  }
  if (runtimes !== undefined) lookup.setRuntimes(runtimes);
  if (harnessRuntimes !== undefined) lookup.setHarnessRuntimes(harnessRuntimes);
  lookup.addObjects(set.entries.map((e) => e.object)).addNamespaces(set.namespaces);
  const handlers = createHandlers(lookup, config, createStructuralPodSpecCheck(config));

  if (options.command === 'default') {
    const defaulted = new Map<Manifest, unknown>();
    for (const entry of set.entries) {
      const verdict = await judge(handlers, entry.kind, entry.object, false);
      // The webhook's patch never touches metadata.namespace: the document keeps what it said.
      defaulted.set(entry.manifest, withNamespaceAsWritten(verdict.defaulted, entry.manifest.value));
    }
    io.stdout(renderDocuments(manifests, defaulted));
    for (const f of set.findings) if (f.severity === 'error') io.stderr(`kaos-operator: ${f.origin.file}:${f.origin.document}: ${f.message}\n`);
    return set.findings.some((f) => f.severity === 'error') ? EXIT_ERRORS : EXIT_CLEAN;
  }

  const findings: Finding[] = [...set.findings];
  for (const entry of set.entries) {
    const verdict = await judge(handlers, entry.kind, entry.object, true);
    const { origin } = entry.manifest;
    for (const e of verdict.errors) findings.push({ origin, object: entry.identity, severity: 'error', ...(e.field === undefined ? {} : { field: e.field }), message: e.message });
    for (const w of verdict.warnings) findings.push({ origin, object: entry.identity, severity: 'warning', message: w });
  }
  findings.sort((a, b) => order(manifests, a) - order(manifests, b));
  const report: Report = { files: files.length, objects: set.entries.length, ignored: set.ignored, findings };
  io.stdout(options.output === 'json' ? formatJson(report) : formatText(report));
  return findings.some((f) => f.severity === 'error') ? EXIT_ERRORS : EXIT_CLEAN;
}

function order(manifests: readonly Manifest[], finding: Finding): number {
  return manifests.findIndex((m) => m.origin === finding.origin);
}

function withNamespaceAsWritten(defaulted: KubeObject, written: unknown): unknown {
  const writtenNs = (written as { metadata?: { namespace?: unknown } }).metadata?.namespace;
  if (writtenNs !== undefined) return defaulted;
  const { namespace: _ns, ...metadata } = defaulted.metadata ?? {};
  return { ...defaulted, metadata };
}

/** The documents again, each KAOS object replaced by its defaulted form, Lists kept whole. */
function renderDocuments(manifests: readonly Manifest[], replaced: ReadonlyMap<Manifest, unknown>): string {
  const docs: string[] = [];
  const listsDone = new Set<object>();
  for (const m of manifests) {
    let value = replaced.get(m) ?? m.value;
    if (m.list !== undefined) {
      if (listsDone.has(m.list)) continue;
      listsDone.add(m.list);
      const items = manifests.filter((other) => other.list === m.list).map((item) => replaced.get(item) ?? item.value);
      value = { ...m.list, items };
    }
    const source = m.origin.source === undefined ? '' : `# Source: ${m.origin.source}\n`;
    // YAML 1.1 on the way out too, so that a string such as "yes" stays quoted for kubectl.
    docs.push(`---\n${source}${stringify(value, { version: '1.1', lineWidth: 0 })}`);
  }
  return docs.join('');
}
