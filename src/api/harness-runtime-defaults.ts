// The harness runtimes the chart ships in ConfigMap kaos-harness-runtimes (docs/api.md, "Agent
// harness"), written once: chart/values.yaml's `defaultImages.harnessPi` and the chart's template
// must give these (test/unit/chart.test.ts), and `npm start` and the e2e stacks create the same
// ConfigMap from here.
import type { KubeObject } from './meta.ts';
import { HARNESS_RUNTIMES_CONFIG_MAP, type HarnessRuntimeEntry } from './harness-runtimes.ts';
import { registryConfigMap } from './mcp-runtime-defaults.ts';

/**
 * KAOS's pi harness image (chart value `defaultImages.harnessPi`). The image's own entrypoint is
 * the harness; the operator renders no command for it, only the HARNESS_* env it reads. Pinned to
 * the tag KAOS's own chart deploys beside the harness code this operator follows (0.1.0: the
 * harness image is versioned apart from KAOS): `latest` would change what a running Agent's pod
 * pulls at its next restart, under a contract written against that release.
 */
export const DEFAULT_HARNESS_PI_IMAGE = 'ghcr.io/axsaucedo/kaos-harness-pi:0.1.0';

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
