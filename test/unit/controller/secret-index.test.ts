import t from 'tap';
import { configSecretsOf, SecretIndex } from '../../../src/controller/secret-index.ts';

const proxy = (proxyConfig: unknown) => ({ metadata: { name: 'm', namespace: 'ns' }, spec: { mode: 'Proxy', proxyConfig } });

t.test("a Proxy's config Secret and API key Secret both wake it", async (t) => {
  const both = proxy({ configYaml: { fromSecretKeyRef: { name: 'cfg', key: 'k' } }, apiKey: { valueFrom: { secretKeyRef: { name: 'key', key: 'k' } } } });
  t.same(configSecretsOf('ModelAPI', both), ['cfg', 'key']);
  t.same(configSecretsOf('ModelAPI', proxy({ models: ['x'], apiKey: { value: 'inline' } })), []);
  const index = new SecretIndex();
  index.upsert('ModelAPI', both);
  t.same(index.keysFor('ns', 'cfg'), ['ModelAPI/ns/m']);
  t.same(index.keysFor('ns', 'key'), ['ModelAPI/ns/m']);
  index.upsert('ModelAPI', proxy({ models: ['x'], apiKey: { valueFrom: { secretKeyRef: { name: 'other', key: 'k' } } } }));
  t.same(index.keysFor('ns', 'cfg'), [], 'forgotten on change');
  t.same(index.keysFor('ns', 'other'), ['ModelAPI/ns/m']);
  index.remove('ModelAPI', proxy({}));
  t.same(index.keysFor('ns', 'other'), []);
});
