// The local stack most e2e files share (scripts/local-stack.ts: a control plane, the CRDs, the
// operator's RBAC, webhook configurations, and the operator as `node dist/main.js` under its
// ServiceAccount), started with images and a model name of its own so that every default a test
// sees is provably the configured one (docs/configuration.md), not a hard-coded fallback. Each file that
// uses it starts a control plane of its own (10–20 s of CPU).
import type { Test } from 'tap';
import { startLocalStack, tail, type LocalStack, type LocalStackOptions } from '../../../scripts/local-stack.ts';

export const IMAGES = {
  agent: 'e2e.local/kaos-agent:e2e',
  mcpServer: 'e2e.local/kaos-mcp-tools:e2e',
  mcpPython: 'e2e.local/python:3.12-slim',
  mcpNode: 'e2e.local/node:22-slim',
  litellm: 'e2e.local/litellm:e2e',
  ollama: 'e2e.local/ollama:e2e',
  memoryService: 'e2e.local/kaos-memory-service:e2e',
} as const;
export const DEFAULT_MODEL = 'e2e-default-model:1b';
export const OPERATOR_ENV: Readonly<Record<string, string>> = {
  DEFAULT_AGENT_IMAGE: IMAGES.agent,
  DEFAULT_MCP_SERVER_IMAGE: IMAGES.mcpServer,
  DEFAULT_MCP_PYTHON_IMAGE: IMAGES.mcpPython,
  DEFAULT_MCP_NODE_IMAGE: IMAGES.mcpNode,
  DEFAULT_LITELLM_IMAGE: IMAGES.litellm,
  DEFAULT_OLLAMA_IMAGE: IMAGES.ollama,
  DEFAULT_MEMORY_SERVICE_IMAGE: IMAGES.memoryService,
  DEFAULT_MODEL_NAME: DEFAULT_MODEL,
};

/**
 * Starts the stack before the file's first test and stops it after the last; on a failure,
 * prints the stack's log and the operator's. Returns the accessor the tests use, which throws a
 * clear error when the stack did not start.
 */
export function useStack(
  t: Test,
  operatorEnv: Readonly<Record<string, string>> = OPERATOR_ENV,
  audit?: LocalStackOptions['audit'],
): () => LocalStack {
  let stack: LocalStack | undefined;
  const stackLog: string[] = [];
  t.before(async () => {
    try {
      stack = await startLocalStack({ log: (line) => stackLog.push(line), operatorEnv: { ...operatorEnv }, ...(audit === undefined ? {} : { audit }) });
    } catch (err) {
      throw new Error(
        `the local stack (control plane + kaos-operator) did not start:\n` +
          `${err instanceof Error ? err.message : String(err)}\n--- stack log ---\n${stackLog.join('\n')}`,
      );
    }
  });
  t.teardown(async () => {
    if (stack === undefined) return;
    if (!t.passing()) {
      process.stderr.write(`--- stack log ---\n${stackLog.join('\n')}\n--- operator log (tail) ---\n${tail(stack.operator.log(), 60)}\n`);
    }
    await stack.stop();
  });
  return () => {
    if (stack === undefined) throw new Error('no local stack: it failed to start (see the error before this one)');
    return stack;
  };
}
