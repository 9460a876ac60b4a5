// The webhook configurations: what the API server is told, and the committed manifests in
// webhooks/ that must match the renderer (regenerate with `node webhooks/generate.ts`).
import t from 'tap';
import { parseAllDocuments } from 'yaml';
import { CONFIGURATION_NAMES, encodeCaBundle, renderWebhookConfigurations, type WebhookEntry } from '../../src/admission/webhook-configs.ts';
import { ANNOTATIONS_READ } from '../../src/admission/match-conditions.ts';
import { DEFAULTED_ANNOTATION, REFERENCE_POLICY_KEY } from '../../src/api/kinds.ts';
import type { KubeObject } from '../../src/api/lookup.ts';
import { renderYaml, staleWebhookFiles, webhookFiles } from '../../webhooks/generate.ts';

const PEM = '-----BEGIN CERTIFICATE-----\nMIIB\n-----END CERTIFICATE-----\n';

function pathOf(entry: WebhookEntry): string {
  return entry.clientConfig.service?.path ?? new URL(entry.clientConfig.url ?? '').pathname;
}

/** Written out, not derived: the path each webhook must call (kubebuilder's shape) and its resource. */
const EXPECTED: Record<string, { path: string; resource: string }> = {
  'magent.kaos.tools': { path: '/mutate-kaos-tools-v1alpha1-agent', resource: 'agents' },
  'mmodelapi.kaos.tools': { path: '/mutate-kaos-tools-v1alpha1-modelapi', resource: 'modelapis' },
  'mmcpserver.kaos.tools': { path: '/mutate-kaos-tools-v1alpha1-mcpserver', resource: 'mcpservers' },
  'mmemorystore.kaos.tools': { path: '/mutate-kaos-tools-v1alpha1-memorystore', resource: 'memorystores' },
  'maccessgrant.kaos.tools': { path: '/mutate-kaos-tools-v1alpha1-accessgrant', resource: 'accessgrants' },
  'vagent.kaos.tools': { path: '/validate-kaos-tools-v1alpha1-agent', resource: 'agents' },
  'vmodelapi.kaos.tools': { path: '/validate-kaos-tools-v1alpha1-modelapi', resource: 'modelapis' },
  'vmcpserver.kaos.tools': { path: '/validate-kaos-tools-v1alpha1-mcpserver', resource: 'mcpservers' },
  'vmemorystore.kaos.tools': { path: '/validate-kaos-tools-v1alpha1-memorystore', resource: 'memorystores' },
  'vaccessgrant.kaos.tools': { path: '/validate-kaos-tools-v1alpha1-accessgrant', resource: 'accessgrants' },
  'vagent-delete.kaos.tools': { path: '/validate-kaos-tools-v1alpha1-agent', resource: 'agents' },
  'vmodelapi-delete.kaos.tools': { path: '/validate-kaos-tools-v1alpha1-modelapi', resource: 'modelapis' },
  'vmcpserver-delete.kaos.tools': { path: '/validate-kaos-tools-v1alpha1-mcpserver', resource: 'mcpservers' },
  'vmemorystore-delete.kaos.tools': { path: '/validate-kaos-tools-v1alpha1-memorystore', resource: 'memorystores' },
  'vaccessgrant-delete.kaos.tools': { path: '/validate-kaos-tools-v1alpha1-accessgrant', resource: 'accessgrants' },
};

/** The matchConditions each type must carry, as the API server will evaluate them. */
const annotationUnchanged = (key: string): string =>
  `(has(object.metadata.annotations) && '${key}' in object.metadata.annotations ? [object.metadata.annotations['${key}']] : []) != ` +
  `(has(oldObject.metadata.annotations) && '${key}' in oldObject.metadata.annotations ? [oldObject.metadata.annotations['${key}']] : [])`;
const changed = (key: string) => ({
  name: 'create-or-changed-spec-or-annotations',
  expression: `(request.operation != 'UPDATE') || (has(object.spec) != has(oldObject.spec) || (has(object.spec) && object.spec != oldObject.spec)) || (${annotationUnchanged(key)})`,
});
const EXPECTED_CONDITIONS = {
  mutate: [changed('kaos.tools/defaulted')],
  validate: [changed('kaos.tools/reference-policy'), { name: 'not-being-deleted', expression: "request.operation != 'UPDATE' || !has(object.metadata.deletionTimestamp)" }],
};

t.test('service-based configurations', async (t) => {
  const [mutating, validating] = renderWebhookConfigurations({ caBundle: PEM });
  const objects: readonly KubeObject[] = [mutating, validating]; // what the harness applies
  t.equal(objects.length, 2);
  t.equal(mutating.kind, 'MutatingWebhookConfiguration');
  t.equal(mutating.metadata.name, CONFIGURATION_NAMES.mutating);
  t.equal(validating.kind, 'ValidatingWebhookConfiguration');
  t.equal(validating.metadata.name, CONFIGURATION_NAMES.validating);

  t.same(mutating.webhooks.map((w) => w.name), ['magent.kaos.tools', 'mmodelapi.kaos.tools', 'mmcpserver.kaos.tools', 'mmemorystore.kaos.tools', 'maccessgrant.kaos.tools']);
  t.same(validating.webhooks.map((w) => w.name), [
    'vagent.kaos.tools',
    'vmodelapi.kaos.tools',
    'vmcpserver.kaos.tools',
    'vmemorystore.kaos.tools',
    'vaccessgrant.kaos.tools',
    'vagent-delete.kaos.tools',
    'vmodelapi-delete.kaos.tools',
    'vmcpserver-delete.kaos.tools',
    'vmemorystore-delete.kaos.tools',
    'vaccessgrant-delete.kaos.tools',
  ]);

  const all = [...mutating.webhooks, ...validating.webhooks];
  t.equal(new Set(all.map((w) => w.name)).size, all.length, 'names are unique');
  for (const w of all) {
    t.ok(w.name.split('.').length >= 3, `${w.name}: fully qualified`);
    t.same(w.admissionReviewVersions, ['v1']);
    t.equal(w.sideEffects, 'None');
    t.equal(w.matchPolicy, 'Equivalent');
    t.equal(w.timeoutSeconds, 5);
    t.notOk('namespaceSelector' in w, 'all namespaces');
    // docs/api.md, "Agent replicas": vagent also judges `kubectl scale` (agents/scale, UPDATE).
    if (w.name === 'vagent.kaos.tools') {
      t.same(w.rules[1], { apiGroups: ['kaos.tools'], apiVersions: ['v1alpha1'], operations: ['UPDATE'], resources: ['agents/scale'], scope: 'Namespaced' }, 'vagent: the scale subresource');
    }
    t.equal(w.rules.length, w.name === 'vagent.kaos.tools' ? 2 : 1);
    const rule = w.rules[0];
    t.same(rule?.apiGroups, ['kaos.tools']);
    t.same(rule?.apiVersions, ['v1alpha1']);
    t.equal(rule?.scope, 'Namespaced');
    t.notOk(rule?.resources.some((r) => r.includes('/')), 'no subresources');
    t.same(w.clientConfig.service, { name: 'kaos-operator-webhook', namespace: 'kaos-system', path: EXPECTED[w.name]?.path, port: 443 }, `${w.name}: its path`);
    t.equal(Buffer.from(w.clientConfig.caBundle ?? '', 'base64').toString('utf8'), PEM, 'caBundle is the base64 of the PEM');
    t.same(rule?.resources, [EXPECTED[w.name]?.resource], `${w.name}: the resource of its path`);
  }
  for (const w of mutating.webhooks) {
    t.equal(w.failurePolicy, 'Fail');
    t.same(w.rules[0]?.operations, ['CREATE', 'UPDATE']);
    t.match(pathOf(w), /^\/mutate-/);
    t.equal(w.reinvocationPolicy, 'Never');
  }
  for (const w of validating.webhooks) t.match(pathOf(w), /^\/validate-/);
  const [agent, modelapi, mcp, store, grant, agentDelete, modelapiDelete, mcpDelete, storeDelete, grantDelete] = validating.webhooks;
  for (const w of [agent, modelapi, mcp, store, grant]) {
    t.equal(w?.failurePolicy, 'Fail');
    t.same(w?.rules[0]?.operations, ['CREATE', 'UPDATE']);
  }
  t.same(modelapiDelete?.rules[0], { apiGroups: ['kaos.tools'], apiVersions: ['v1alpha1'], operations: ['DELETE'], resources: ['modelapis'], scope: 'Namespaced' });
  t.same(mcpDelete?.rules[0]?.resources, ['mcpservers']);
  t.same(agentDelete?.rules[0]?.resources, ['agents'], 'an Agent others list as a peer');
  t.same(storeDelete?.rules[0]?.resources, ['memorystores'], 'a MemoryStore Agents bind to');
  t.same(grantDelete?.rules[0]?.resources, ['accessgrants']);
  for (const w of [agentDelete, modelapiDelete, mcpDelete, storeDelete, grantDelete]) {
    t.equal(w?.failurePolicy, 'Ignore', 'deleting never depends on the operator');
    t.same(w?.rules[0]?.operations, ['DELETE']);
  }
  t.equal(pathOf(modelapiDelete as WebhookEntry), '/validate-kaos-tools-v1alpha1-modelapi', 'same validate path');
});

t.test('matchConditions: UPDATEs that cannot change the answer are not sent; CREATE and DELETE always are', async (t) => {
  const [mutating, validating] = renderWebhookConfigurations({ caBundle: PEM });
  for (const w of [...mutating.webhooks, ...validating.webhooks]) {
    const type = pathOf(w).startsWith('/mutate-') ? 'mutate' : 'validate';
    if (w.rules[0]?.operations.includes('DELETE')) {
      t.notOk('matchConditions' in w, `${w.name}: DELETE is always sent`);
      continue;
    }
    t.same(w.matchConditions, EXPECTED_CONDITIONS[type], `${w.name}: the conditions of its type`);
    for (const c of w.matchConditions ?? []) {
      // CEL's || is true as soon as one side is: a CREATE never evaluates the oldObject parts.
      t.match(c.expression, /^\(?request\.operation != 'UPDATE'\)? \|\| /, `${w.name} ${c.name}: every CREATE is sent`);
    }
  }
  t.same(ANNOTATIONS_READ, { mutate: [DEFAULTED_ANNOTATION], validate: [REFERENCE_POLICY_KEY] }, 'the annotations each handler reads');
  const [changedMutate] = mutating.webhooks[0]?.matchConditions ?? [];
  t.match(changedMutate?.expression, /object\.spec != oldObject\.spec/, 'mutate: a spec change is sent');
  t.match(changedMutate?.expression, /'kaos\.tools\/defaulted' in object\.metadata\.annotations/, 'mutate: a change of kaos.tools/defaulted is sent');
  t.notMatch(changedMutate?.expression, /reference-policy/, 'mutate does not read the reference policy');
  const [changedValidate, deleting] = validating.webhooks[0]?.matchConditions ?? [];
  t.match(changedValidate?.expression, /object\.spec != oldObject\.spec/, 'validate: a spec change is sent');
  t.match(changedValidate?.expression, /'kaos\.tools\/reference-policy' in object\.metadata\.annotations/, 'validate: a change of the reference policy is sent');
  t.match(deleting?.expression, /!has\(object\.metadata\.deletionTimestamp\)/, 'validate: an object being deleted is waved through by the API server');
});

t.test('url-based configurations for a server outside the cluster', async (t) => {
  const [mutating, validating] = renderWebhookConfigurations({ url: 'https://127.0.0.1:40123/', caBundle: PEM });
  for (const w of [...mutating.webhooks, ...validating.webhooks]) {
    t.notOk('service' in w.clientConfig);
    t.match(w.clientConfig.url, /^https:\/\/127\.0\.0\.1:40123\/(mutate|validate)-kaos-tools-v1alpha1-(agent|modelapi|mcpserver|memorystore|accessgrant)$/);
  }
  t.equal(mutating.webhooks[0]?.clientConfig.url, 'https://127.0.0.1:40123/mutate-kaos-tools-v1alpha1-agent');
});

t.test('options: caBundle forms, service, selector, annotations', async (t) => {
  t.equal(encodeCaBundle(PEM), Buffer.from(PEM).toString('base64'));
  t.equal(encodeCaBundle('TUlJQg=='), 'TUlJQg==', 'base64 kept');
  t.equal(encodeCaBundle('CA_BUNDLE'), 'CA_BUNDLE', 'placeholder kept');
  const [m] = renderWebhookConfigurations({
    service: { name: 'hook', namespace: 'ops', port: 8443 },
    namespaceSelector: { matchExpressions: [{ key: 'kubernetes.io/metadata.name', operator: 'NotIn', values: ['kube-system'] }] },
    annotations: { 'cert-manager.io/inject-ca-from': 'ops/hook' },
  });
  const w = m.webhooks[0];
  t.same(w?.clientConfig, { service: { name: 'hook', namespace: 'ops', path: '/mutate-kaos-tools-v1alpha1-agent', port: 8443 } }, 'no caBundle when none given');
  t.same(w?.namespaceSelector?.matchExpressions?.[0]?.values, ['kube-system']);
  t.same(m.metadata.annotations, { 'cert-manager.io/inject-ca-from': 'ops/hook' });
});

t.test('committed manifests match the renderer', async (t) => {
  t.same(await staleWebhookFiles(), [], 'run `node webhooks/generate.ts` to regenerate');
  for (const { file, content } of webhookFiles()) {
    const docs = parseAllDocuments(content);
    t.equal(Array.isArray(docs) ? docs.length : 0, 1, `${file}: one document`);
    t.match(content, /caBundle: CA_BUNDLE/, `${file}: CA placeholder`);
    if (file.startsWith('local/')) t.match(content, /url: WEBHOOK_BASE_URL\/mutate|url: WEBHOOK_BASE_URL\/validate/, `${file}: URL placeholder`);
  }
  const filled = renderYaml({ url: 'https://127.0.0.1:9443', caBundle: PEM });
  t.notMatch(filled.mutating + filled.validating, /CA_BUNDLE|WEBHOOK_BASE_URL/, 'a filled render has no placeholders');
});
