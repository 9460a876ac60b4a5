// The ClusterRole lets the controller do what its writes need.
import t from 'tap';
import { CHILD_TYPES } from '../../../src/cluster/child-apply.ts';
import { OPERATOR_RULES } from '../../../src/cluster/rbac.ts';

function allowed(group: string, resource: string, verb: string): boolean {
  return OPERATOR_RULES.some((r) => r.apiGroups.includes(group) && r.resources.includes(resource) && r.verbs.includes(verb));
}

t.test('every child kind can be server-side applied into existence: patch and create', async (t) => {
  // kube-apiserver authorizes an apply PATCH of an object that does not exist as `create` as
  // well, so a role with `patch` alone can update a child but never make it.
  for (const [kind, type] of Object.entries(CHILD_TYPES)) {
    t.ok(allowed(type.group, type.plural, 'patch'), `${kind}: patch`);
    t.ok(allowed(type.group, type.plural, 'create'), `${kind}: create`);
    t.ok(allowed(type.group, type.plural, 'delete'), `${kind}: delete (prune)`);
  }
});

t.test('a child can be read one by one: get, for the fresh read before an apply that drops an element of a keyed list', async (t) => {
  // kube/apply.ts releaseDropped: the cache keeps only the operator's own field set. `list`,
  // granted for the cache, reads as much already.
  for (const [kind, type] of Object.entries(CHILD_TYPES)) {
    t.ok(allowed(type.group, type.plural, 'get'), `${kind}: get`);
    t.ok(allowed(type.group, type.plural, 'list'), `${kind}: list`);
  }
});

t.test('ServiceAccount issuer discovery: get on its two non-resource URLs, in the ClusterRole', async (t) => {
  const rule = OPERATOR_RULES.find((r) => r.nonResourceURLs !== undefined);
  t.same(rule?.nonResourceURLs, ['/.well-known/openid-configuration', '/openid/v1/jwks']);
  t.same(rule?.verbs, ['get'], 'read only');
  t.equal(rule?.scope, 'cluster', 'non-resource URLs exist only in a ClusterRole');
  t.same([rule?.apiGroups, rule?.resources], [[], []], 'no resources in the same rule (the API server refuses both together)');
});
