// The runtimes the chart ships in ConfigMap kaos-mcp-runtimes (docs/api.md, "MCPServer runtimes"), written once:
// chart/values.yaml's `mcpRuntimes.builtin` must equal them (test/unit/chart.test.ts), and
// `npm start` and the e2e stacks create the same ConfigMap from here.
import { stringify } from 'yaml';
import type { KubeObject } from './meta.ts';
import { RUNTIMES_CONFIG_MAP, RUNTIMES_KEY, type RuntimeEntry } from './mcp-runtimes.ts';

export const BUILTIN_RUNTIMES: Readonly<Record<string, RuntimeEntry>> = {
  // The image's own entrypoint serves the tools in MCP_TOOLS_STRING on port 8000. Pinned to a
  // KAOS release (the image is built with each one), never `latest`, which follows KAOS's main.
  'python-string': {
    type: 'python',
    image: 'axsauze/kaos-mcp-python-string:0.7.7',
    description: 'Execute Python code strings as MCP tools',
    paramsEnvVar: 'MCP_TOOLS_STRING',
    transport: 'http',
  },
  kubernetes: {
    type: 'go',
    image: 'ghcr.io/manusa/kubernetes-mcp-server:latest',
    description: 'Kubernetes API operations',
    args: ['--port', '8000'],
    transport: 'http',
  },
  // Args, not a command: a command would replace the image's entrypoint (the server itself).
  slack: {
    type: 'nodejs',
    image: 'zencoderai/slack-mcp:latest',
    description: 'Slack messaging integration',
    args: ['--transport', 'http', '--port', '8000'],
    transport: 'http',
    requiredEnv: ['SLACK_BOT_TOKEN', 'SLACK_TEAM_ID'],
  },
};

/** runtimes.yaml for `runtimes` (of either registry). */
export function runtimesYaml(runtimes: Readonly<Record<string, object>> = BUILTIN_RUNTIMES): string {
  return stringify({ runtimes }, { lineWidth: 0 });
}

/** A registry ConfigMap `name` in `namespace` holding `runtimes`. */
export function registryConfigMap(name: string, namespace: string, runtimes: Readonly<Record<string, object>>): KubeObject {
  return {
    apiVersion: 'v1',
    kind: 'ConfigMap',
    metadata: { name, namespace, labels: { 'app.kubernetes.io/name': 'kaos-operator' } },
    data: { [RUNTIMES_KEY]: runtimesYaml(runtimes) },
  };
}

/** The MCP registry ConfigMap in `namespace` (the operator's). */
export function runtimesConfigMap(namespace: string, runtimes: Readonly<Record<string, RuntimeEntry>> = BUILTIN_RUNTIMES): KubeObject {
  return registryConfigMap(RUNTIMES_CONFIG_MAP, namespace, runtimes);
}
