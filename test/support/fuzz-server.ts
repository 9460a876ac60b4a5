// The server the admission fuzzer sends to (fuzz-target.ts starts it), on a thread of its own as
// the operator's admission thread is: the real HTTPS webhook server with the real router and the
// real mutating and validating handlers (podSpec check included) over an in-memory lookup
// holding every sample object. The podSpec check's client serializes the Deployment it is given,
// as the real one does before it sends it, and accepts it, so a "spec.podSpec could not be
// checked" log line can only mean the check threw because of the object itself — the fail-open
// the fuzzer reports. Log lines are counted by message, never kept: a 100,000-request run must
// not hold its log in memory.
import { createMutatingHandler } from '../../src/admission/mutate.ts';
import { createPodSpecCheck } from '../../src/admission/pod-spec-check.ts';
import type { HandlerFactory } from '../../src/admission/types.ts';
import { createValidatingHandler } from '../../src/admission/validate.ts';
import { isKaosKind } from '../../src/api/kinds.ts';
import { loadConfig } from '../../src/config/config.ts';
import { deploymentDryRun } from '../../src/kube/dry-run.ts';
import { createLogger } from '../../src/server/pino-logger.ts';
import { startWebhookServer } from '../../src/server/webhook-server.ts';
import { sampleObjects } from './arbitraries.ts';
import { MemoryLookup } from './memory-lookup.ts';
import { serveThisThread } from './server-thread.ts';

serveThisThread<{ certDir: string }>(async ({ certDir }) => {
  const objects = sampleObjects();
  const lookup = new MemoryLookup().add(...objects.filter((o) => isKaosKind(o.kind)));
  for (const ns of objects.filter((o) => o.kind === 'Namespace')) lookup.setNamespace(ns.metadata?.name ?? '', ns.metadata?.labels ?? {});

  const counts: Record<string, number> = {};
  const logger = createLogger({
    level: 'warn',
    destination: {
      write: (line: string) => {
        const msg = (JSON.parse(line) as { msg?: string }).msg ?? '';
        counts[msg] = (counts[msg] ?? 0) + 1;
      },
    },
  });
  const config = loadConfig({});
  const dryRunCreate = deploymentDryRun({ create: async <T>(_path: string, body: unknown) => (JSON.stringify(body), body as T) });
  const podSpecCheck = createPodSpecCheck({ dryRunCreate, config, logger });
  const handlers: HandlerFactory = (kind, type) =>
    type === 'mutate' ? createMutatingHandler(kind, { lookup, config }) : createValidatingHandler(kind, { lookup, config, podSpecCheck });
  const server = await startWebhookServer({
    config: { host: '127.0.0.1', port: 0, certDir, certCheckIntervalSeconds: 3600 },
    handlers,
    logger,
  });
  return { port: server.port, counts: () => ({ ...counts }), close: () => server.close() };
});
