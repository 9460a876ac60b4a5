// The harness runtimes the chart ships in ConfigMap kaos-harness-runtimes (docs/api.md, "Agent
// harness"), written once: chart/values.yaml's `defaultImages.harnessPi` and the chart's template
// must give these (test/unit/chart.test.ts), and `npm start` and the e2e stacks create the same
// ConfigMap from here.
import type { KubeObject } from './meta.ts';
import { HARNESS_RUNTIMES_CONFIG_MAP, type HarnessRuntimeEntry } from './harness-runtimes.ts';
import { registryConfigMap } from './mcp-runtime-defaults.ts';

/**
 * KAOS's pi harness image (chart value `defaultImages.harnessPi`). The image's own entrypoint is
 * the harness; the operator renders no command for it, only the HARNESS_* env it reads.
 */
export const DEFAULT_HARNESS_PI_IMAGE = 'ghcr.io/axsaucedo/kaos-harness-pi:latest';

export const BUILTIN_HARNESS_RUNTIMES: Readonly<Record<string, HarnessRuntimeEntry>> = {
  pi: { image: DEFAULT_HARNESS_PI_IMAGE, driver: 'pi', description: 'pi coding harness (MIT)' },
  // Proprietary: no image is shipped, so an Agent with this runtime names its own.
  claude: { image: '', driver: 'claude', description: 'Claude Code (proprietary, bring your own image)' },
};

/** The harness registry ConfigMap in `namespace` (SYSTEM_NAMESPACE). */
export function harnessRuntimesConfigMap(
  namespace: string,
  runtimes: Readonly<Record<string, HarnessRuntimeEntry>> = BUILTIN_HARNESS_RUNTIMES,
): KubeObject {
  return registryConfigMap(HARNESS_RUNTIMES_CONFIG_MAP, namespace, runtimes);
}
