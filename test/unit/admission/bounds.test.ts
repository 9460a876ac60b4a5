// One request's work and answer are bounded, however hostile the object.
// Sizes and counts only; how long it takes is for a bench.
import t from 'tap';
import { encodeDecision } from '../../../src/admission/review.ts';
import { createValidatingHandler } from '../../../src/admission/validate.ts';
import type { AdmissionDecision } from '../../../src/admission/types.ts';
import { boundedErrors, commonField, MAX_CAUSES, MAX_WARNINGS } from '../../../src/api/validation/answer-limits.ts';
import { boundedValue } from '../../../src/api/bounded-text.ts';
import { invalid, notFound } from '../../../src/api/field-error.ts';
import { REFERENCE_POLICY_KEY } from '../../../src/api/kinds.ts';
import { LookupBudget, LookupNotMade } from '../../../src/api/lookup-budget.ts';
import { MemoryLookup } from '../../support/memory-lookup.ts';
import { agent, CONFIG, hosted, modelAPI, NS } from '../api/objects.ts';
import { admissionRequest } from '../../support/admission-request.ts';

/** A cache that misses on everything absent, each miss a counted live read. */
const world = () => new MemoryLookup({ liveOnMiss: true }).setNamespace(NS).add(hosted('m'));
const encodedBytes = (decision: AdmissionDecision): number =>
  Buffer.byteLength(JSON.stringify(encodeDecision('uid-1', 'validate', decision)), 'utf8');
const causes = (decision: AdmissionDecision) => decision.status?.details?.causes ?? [];
const names = (n: number, prefix = 'missing') => Array.from({ length: n }, (_, i) => `${prefix}-${i}`);
const KiB = 1024;

t.test('10,000 missing MCPServers: at most 10 live reads, and a short, clear denial', async (t) => {
  const lookup = world();
  const handler = createValidatingHandler('Agent', { lookup, config: CONFIG });
  const decision = await handler(admissionRequest('Agent', agent('a1', { modelAPI: 'm', mcpServers: names(10_000) })));
  t.equal(lookup.liveReads, 10, 'ten live reads, not ten thousand');
  t.equal(decision.allowed, false);
  const all = causes(decision);
  t.ok(all.length <= MAX_CAUSES + 1, `${all.length} causes`);
  t.same(all[0], { reason: 'FieldValueTooMany', field: 'spec.mcpServers', message: 'Too many: 10000: must have at most 100 items' });
  const found = all.filter((c) => c.message === `Not found: "missing-0"`);
  t.equal(found.length, 1, 'the first names were looked up and are plainly not found');
  t.equal(all.filter((c) => /^Not found: "missing-\d+"$/.test(c.message)).length, 10, 'ten names looked up');
  t.ok(
    all.some((c) => c.field === 'spec.mcpServers[10]' && c.message === 'Not found: "missing-10": not checked: this request already made 10 lookups that the cache could not answer'),
    'names past the budget are unknown, and say why',
  );
  t.ok(encodedBytes(decision) < 24 * KiB, `${encodedBytes(decision)} bytes`);
});

t.test('within the schema: every name past the 10th is "not checked", in the causes and the message', async (t) => {
  const lookup = world();
  const handler = createValidatingHandler('Agent', { lookup, config: CONFIG });
  const decision = await handler(admissionRequest('Agent', agent('a1', { modelAPI: 'm', mcpServers: names(60) })));
  t.equal(lookup.liveReads, 10);
  const all = causes(decision);
  t.equal(all.length, 60, 'one cause per missing name');
  t.equal(all.filter((c) => c.message.includes('not checked')).length, 50);
  t.match(decision.status?.message, /spec\.mcpServers\[12\]: Not found: "missing-12": not checked: this request already made 10 lookups/);
  t.match(decision.status?.message, /, too many errors, the list is truncated: \d+ more errors not shown\]$/, 'the message stays short: the causes list them all');
  t.ok(Buffer.byteLength(decision.status?.message ?? '') < 4 * KiB, 'the whole message, prefix included, is under 4 KiB');
});

t.test('the budget is per request: concurrent requests never share or wait on one another', async (t) => {
  const lookup = world();
  const handler = createValidatingHandler('Agent', { lookup, config: CONFIG });
  const both = await Promise.all([1, 2].map((i) => handler(admissionRequest('Agent', agent(`a${i}`, { modelAPI: 'm', mcpServers: names(40, `r${i}`) })))));
  t.equal(lookup.liveReads, 20, 'ten each');
  for (const d of both) t.equal(causes(d).filter((c) => c.message.includes('not checked')).length, 30);
  t.ok(lookup.maxInFlight >= 20, 'both requests’ reads were pending together');
});

t.test('under reference policy Warn, unknown names are warnings, at most 30 of them', async (t) => {
  const lookup = world();
  const handler = createValidatingHandler('Agent', { lookup, config: CONFIG });
  const warned = agent('a1', { modelAPI: 'm', mcpServers: names(100) }, { metadata: { name: 'a1', namespace: NS, annotations: { [REFERENCE_POLICY_KEY]: 'Warn' } } });
  const decision = await handler(admissionRequest('Agent', warned));
  t.equal(decision.allowed, true);
  t.equal(lookup.liveReads, 10);
  t.equal(decision.warnings?.length, MAX_WARNINGS);
  t.equal(decision.warnings?.at(-1), '71 more warnings not shown');
  t.match(decision.warnings?.[10], /^spec\.mcpServers\[10\]: Not found: "missing-10": not checked/);
});

t.test('the deadline: past it no live read starts, and the name is unknown', async (t) => {
  let now = 0;
  const budget = new LookupBudget({ now: () => now });
  t.equal(budget.claim(), 2000, 'a read may take what is left of the 2 s');
  now = 1500;
  t.equal(budget.claim(), 500);
  now = 2000;
  t.throws(() => budget.claim(), new LookupNotMade('deadline', budget));
  t.match(new LookupNotMade('deadline', budget).message, "not checked: the lookups that the cache could not answer took all of this request's 2s");
  const lookup = world();
  await t.rejects(lookup.get('MCPServer', NS, 'x', budget), LookupNotMade);
  t.equal(lookup.liveReads, 0, 'no read was made');
  t.ok(await lookup.get('ModelAPI', NS, 'm', budget), 'a cache hit costs nothing and is always answered');
});

t.test('a 3 MiB config.env of bare numbers: a few KiB of answer, the rest counted', async (t) => {
  const env: number[] = new Array<number>(1_572_864).fill(7); // "7," × 1.5 M ≈ 3 MiB of JSON
  const handler = createValidatingHandler('Agent', { lookup: world(), config: CONFIG });
  const decision = await handler(admissionRequest('Agent', agent('a1', { modelAPI: 'm', config: { env } })));
  const all = causes(decision);
  t.equal(all.length, MAX_CAUSES + 1);
  t.same(all[0], { reason: 'FieldValueTooMany', field: 'spec.config.env', message: 'Too many: 1572864: must have at most 512 items' });
  t.equal(all.at(-1)?.field, 'spec.config.env');
  t.match(all.at(-1)?.message, /^Too many: \d+: further errors not shown, the list is truncated$/);
  t.match(decision.status?.message, /, too many errors, the list is truncated: \d+ more errors not shown\]$/);
  t.ok(Buffer.byteLength(decision.status?.message ?? '') <= 4 * KiB, 'the whole message, prefix included, stays within 4 KiB');
  t.ok(encodedBytes(decision) < 24 * KiB, `${encodedBytes(decision)} bytes`);
});

t.test('242,000 invalid mcpServers names: bounded like any other list', async (t) => {
  const bad = names(242_000, 'Bad_Name');
  const handler = createValidatingHandler('Agent', { lookup: world(), config: CONFIG });
  const decision = await handler(admissionRequest('Agent', agent('a1', { modelAPI: 'm', mcpServers: bad })));
  const all = causes(decision);
  t.ok(all.length <= MAX_CAUSES + 1, `${all.length} causes: long ones end the list before 100`);
  t.equal(all[0]?.message, 'Too many: 242000: must have at most 100 items');
  const more = Number(/^Too many: (\d+): further errors not shown, the list is truncated$/.exec(all.at(-1)?.message ?? '')?.[1]);
  t.equal(all.length - 1 + more, 101, 'the list counts every error: "Too many" and the first 100 names, the rest past maxItems unjudged');
  t.equal(all.at(-1)?.field, 'spec.mcpServers', 'the deepest field the rest share');
  t.ok(encodedBytes(decision) < 32 * KiB, `${encodedBytes(decision)} bytes`);
});

t.test('a 5 MiB invalid modelAPI string is never quoted back', async (t) => {
  const huge = 'X'.repeat(5 * KiB * KiB);
  const handler = createValidatingHandler('Agent', { lookup: world(), config: CONFIG });
  const decision = await handler(admissionRequest('Agent', agent('a1', { modelAPI: huge })));
  t.same(causes(decision), [{ reason: 'FieldValueTooLong', field: 'spec.modelAPI', message: 'Too long: may not be more than 253 bytes' }]);
  t.ok(encodedBytes(decision) < 1 * KiB, `${encodedBytes(decision)} bytes`);
  const proxy = await createValidatingHandler('ModelAPI', { lookup: world(), config: CONFIG })(
    admissionRequest('ModelAPI', modelAPI('p', { mode: 'Proxy', proxyConfig: { apiBase: huge } })),
  );
  t.same(causes(proxy), [{ reason: 'FieldValueTooLong', field: 'spec.proxyConfig.apiBase', message: 'Too long: may not be more than 2048 bytes' }]);
});

t.test('quoted values are cut at 256 characters and marked', async (t) => {
  const long = 'é'.repeat(300);
  t.equal(invalid('spec.x', long, 'bad').errorBody(), `Invalid value: "${'é'.repeat(256)}"...(truncated): bad`);
  t.equal(boundedValue('short'), '"short"');
  t.equal(boundedValue(['a'.repeat(300)]).length, 256 + '...(truncated)'.length);
  t.equal(boundedValue(`a${'😀'.repeat(200)}`), `"a${'😀'.repeat(127)}"...(truncated)`, 'a surrogate pair is never split');
  t.ok(invalid('spec.x', 1, 'd'.repeat(5000)).errorBody().endsWith('...(truncated)'), 'details are cut too');
});

t.test('the sentinel cause sits on the deepest field the left-out errors share', async (t) => {
  t.equal(commonField(['spec.config.env[3]', 'spec.config.env[40]']), 'spec.config.env');
  t.equal(commonField(['spec.mcpServers[1]', 'spec.modelAPI']), 'spec');
  t.equal(commonField(['spec.a', 'spec.a']), 'spec.a');
  t.equal(commonField(['spec', 'metadata.name']), '');
  const few = [notFound('spec.a', 'x')];
  t.same(boundedErrors(few), few, 'short lists are untouched');
});

t.test('a check that can only warn makes no live read: a forward peer reference costs nothing', async (t) => {
  const lookup = world(); // counts a live read for every cache miss, as KaosCache makes one
  const handler = createValidatingHandler('Agent', { lookup, config: CONFIG });
  const forward = await handler(admissionRequest('Agent', agent('a1', { modelAPI: 'm', agentNetwork: { access: ['a2', 'a3'] } })));
  t.equal(lookup.liveReads, 0, 'two missing peers, no live read');
  t.equal(forward.allowed, true);
  t.same(forward.warnings, [
    'spec.agentNetwork.access[0]: Agent "a2" does not exist yet; it is wired in once it does',
    'spec.agentNetwork.access[1]: Agent "a3" does not exist yet; it is wired in once it does',
  ], 'still warned about, from the cache');

  const denied = await handler(admissionRequest('Agent', agent('a4', { modelAPI: 'gone', agentNetwork: { access: ['a5'] } })));
  t.equal(lookup.liveReads, 1, 'the missing ModelAPI, which denies, is confirmed with one live read; the peer is not');
  t.equal(denied.allowed, false);
  t.same(causes(denied), [{ reason: 'FieldValueNotFound', field: 'spec.modelAPI', message: 'Not found: "gone"' }]);
});
