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

t.test('children are never read one by one: no get', async (t) => {
  for (const [kind, type] of Object.entries(CHILD_TYPES)) t.notOk(allowed(type.group, type.plural, 'get'), `${kind}: no get`);
});
