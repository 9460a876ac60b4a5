// Label selectors as Kubernetes matches them (labels.Selector.Matches): matchLabels and each
// operator, every requirement at once; an unparsable selector matches nothing.
import t from 'tap';
import { matchesLabels, parseLabelSelector } from '../../../src/api/label-selector.ts';

const matches = (selector: unknown, labels?: Record<string, string>): boolean => {
  const parsed = parseLabelSelector(selector);
  return parsed !== undefined && matchesLabels(parsed, labels);
};

t.test('matchLabels: every pair present with exactly that value', async (t) => {
  t.ok(matches({ matchLabels: { team: 'a' } }, { team: 'a', extra: 'x' }));
  t.notOk(matches({ matchLabels: { team: 'a' } }, { team: 'b' }));
  t.notOk(matches({ matchLabels: { team: 'a', tier: 'web' } }, { team: 'a' }), 'both must hold');
  t.notOk(matches({ matchLabels: { team: 'a' } }, undefined));
});

t.test('operators', async (t) => {
  const labels = { tier: 'web', env: 'prod' };
  t.ok(matches({ matchExpressions: [{ key: 'tier', operator: 'In', values: ['web', 'api'] }] }, labels));
  t.notOk(matches({ matchExpressions: [{ key: 'tier', operator: 'In', values: ['api'] }] }, labels));
  t.ok(matches({ matchExpressions: [{ key: 'tier', operator: 'NotIn', values: ['api'] }] }, labels));
  t.ok(matches({ matchExpressions: [{ key: 'zone', operator: 'NotIn', values: ['x'] }] }, labels), 'NotIn holds for a missing label');
  t.ok(matches({ matchExpressions: [{ key: 'env', operator: 'Exists' }] }, labels));
  t.notOk(matches({ matchExpressions: [{ key: 'zone', operator: 'Exists' }] }, labels));
  t.ok(matches({ matchExpressions: [{ key: 'zone', operator: 'DoesNotExist' }] }, labels));
  t.notOk(matches({ matchExpressions: [{ key: 'env', operator: 'DoesNotExist' }] }, labels));
  t.notOk(matches({ matchLabels: { env: 'prod' }, matchExpressions: [{ key: 'tier', operator: 'In', values: ['api'] }] }, labels), 'labels and expressions together');
});

t.test('an empty selector matches everything; an unparsable one nothing', async (t) => {
  t.ok(matches({}, {}));
  t.ok(matches({ matchLabels: {}, matchExpressions: [] }, { a: 'b' }));
  t.equal(parseLabelSelector({ matchExpressions: [{ key: 'a', operator: 'Near', values: ['b'] }] }), undefined);
  t.equal(parseLabelSelector({ matchExpressions: [{ key: 'a', operator: 'In' }] }), undefined);
  t.equal(parseLabelSelector({ matchLabels: { 'a b': 'c' } }), undefined);
});
