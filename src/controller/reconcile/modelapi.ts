// ModelAPI (docs/api.md, "ModelAPI"): no dependencies to resolve. Render (Proxy: ConfigMap + Deployment +
// Service; Hosted: Deployment + Service; HTTPRoute with the gateway), apply, prune what the
// other mode left (Proxy → Hosted deletes the ConfigMap), and report the Deployment's progress.
import { getIn } from '../../api/json.ts';
import { renderModelAPI, type ModelAPIInput } from '../../render/index.ts';
import { converge } from './children.ts';
import { configSourceDeps } from './config-source.ts';
import type { KindReconciler } from './context.ts';
import { reconciler } from './frame.ts';

export const reconcileModelAPI: KindReconciler = reconciler('ModelAPI', async (run) => {
  const { ctx, key } = run;
  // The API server checked the spec against the CRD schema: its shape is ModelAPIInput's.
  const modelAPI = run.parent as unknown as ModelAPIInput;
  const deps = configSourceDeps(ctx.reads, key.namespace, getIn(modelAPI.spec, 'proxyConfig', 'configYaml', 'fromSecretKeyRef'));
  const rendered = renderModelAPI(modelAPI, deps, ctx.config);
  await converge(run, rendered);
});
