// Envoy Gateway's SecurityPolicy is watched through its CRD: absent, it is "not served" and no
// reflector lists it; installed later, its reflector starts and `served()` turns true once synced;
// uninstalled, `served()` turns false. Each change is told once.
import t from 'tap';
import type { KubeObject } from '../../../src/api/meta.ts';
import { OptionalApiWatch, gatewayStatusAddress } from '../../../src/controller/watches.ts';
import type { ReflectorEvent } from '../../../src/kube/reflector.ts';
import type { ReflectorGroup } from '../../../src/kube/reflector-group.ts';
import { settle } from './fake-clock.ts';

t.test('the CRD appears, is established, goes away', async (t) => {
  let crds: KubeObject[] = [];
  const listeners: ((e: ReflectorEvent<KubeObject>) => void)[] = [];
  const registered: { fieldSelector?: string }[] = [];
  let synced = false;
  let resolveSync: () => void = () => undefined;
  const group = { isSynced: () => synced, waitForSync: () => new Promise<void>((r) => { resolveSync = r; }) } as unknown as ReflectorGroup;
  let groups = 0;
  const cache = {
    registerGroup: () => group,
    register: (_type: unknown, options: { fieldSelector?: string; transform?: (o: KubeObject) => KubeObject }) => {
      registered.push(options);
      return { list: () => crds.map((o) => options.transform?.(o) ?? o), on: (l: (e: ReflectorEvent<KubeObject>) => void) => { listeners.push(l); return () => undefined; } };
    },
  };
  const changes: boolean[] = [];
  const watch = new OptionalApiWatch(cache, 'securitypolicies.gateway.envoyproxy.io', () => { groups++; return group; }, () => undefined);
  watch.onChange(() => changes.push(watch.served()));
  t.same(registered.map((r) => r.fieldSelector), ['metadata.name=securitypolicies.gateway.envoyproxy.io'], 'one CRD, by name');
  t.equal(watch.served(), false);
  t.equal(groups, 0, 'no reflector of a type nobody serves');

  const crd = (established: boolean): KubeObject => ({ apiVersion: 'apiextensions.k8s.io/v1', kind: 'CustomResourceDefinition', metadata: { name: 'securitypolicies.gateway.envoyproxy.io', resourceVersion: '1' }, spec: { big: 'x'.repeat(1000) }, status: { conditions: [{ type: 'Established', status: established ? 'True' : 'False' }] } } as KubeObject);
  crds = [crd(false)];
  for (const l of listeners) l({ type: 'add', object: crds[0] as KubeObject });
  t.equal(groups, 0, 'not yet established');
  crds = [crd(true)];
  for (const l of listeners) l({ type: 'update', old: crd(false), object: crds[0] as KubeObject });
  t.equal(groups, 1, 'the reflector starts');
  t.equal(watch.served(), false, 'not before it has listed');
  synced = true;
  resolveSync();
  await settle();
  t.equal(watch.served(), true);
  crds = [];
  for (const l of listeners) l({ type: 'delete', object: crd(true) });
  t.equal(watch.served(), false);
  t.same(changes, [true, false]);
  crds = [crd(true)];
  for (const l of listeners) l({ type: 'add', object: crds[0] as KubeObject });
  t.equal(groups, 1, 'the reflector is registered once');
  t.equal(watch.served(), true);
});

t.test("the Gateway's status address: the first non-empty one", async (t) => {
  t.equal(gatewayStatusAddress({ status: { addresses: [{ value: '' }, { value: '10.0.0.7' }, { value: 'x' }] } } as KubeObject), '10.0.0.7');
  t.equal(gatewayStatusAddress({ status: {} } as KubeObject), undefined);
  t.equal(gatewayStatusAddress(undefined), undefined);
});
