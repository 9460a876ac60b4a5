// docs/api.md's field tables are generated from the schemas (docs/api-reference.ts): the committed
// page must be exactly what `npm run gen:docs` makes of it, so a schema change without a
// regeneration fails here, as a CRD change without `npm run gen:crds` fails test/unit/api/crds.test.ts.
import { readFile } from 'node:fs/promises';
import t from 'tap';
import { KINDS } from '../../../src/api/kinds.ts';
import { SPEC_SCHEMAS } from '../../../src/api/schema/index.ts';
import { fieldRows, fieldTable, fillGenerated, generatedIds } from '../../../docs/api-reference.ts';

const page = await readFile(new URL('../../../docs/api.md', import.meta.url), 'utf8');

t.test('the committed docs/api.md is what the schemas generate (run npm run gen:docs)', async (t) => {
  t.equal(page, fillGenerated(page));
  t.equal(fillGenerated(fillGenerated(page)), fillGenerated(page), 'generation is idempotent');
});

t.test('every kind has its resource summary, spec and status tables, and the shared types', async (t) => {
  for (const id of generatedIds()) t.match(page, `<!-- BEGIN GENERATED ${id} -->`, id);
  const without = page.replace(/<!-- BEGIN GENERATED Agent\.spec -->[\s\S]*?<!-- END GENERATED Agent\.spec -->/, '');
  t.throws(() => fillGenerated(without), /missing \[Agent\.spec\]/, 'a page that lost a block is refused');
  t.throws(() => fillGenerated('<!-- BEGIN GENERATED Nope.spec -->\n<!-- END GENERATED Nope.spec -->'), /unknown generated block/);
});

t.test('every spec field of every kind has a row', async (t) => {
  for (const kind of KINDS) {
    for (const name of Object.keys(SPEC_SCHEMAS[kind].properties)) t.match(page, `| \`spec.${name}\` |`, `${kind} spec.${name}`);
  }
});

t.test('a row says type, default, validation and description; nested objects and array items are walked', async (t) => {
  const root = {
    type: 'object',
    required: ['spec'],
    properties: {
      spec: {
        type: 'object',
        required: ['steps'],
        properties: {
          steps: { type: 'integer', format: 'int32', minimum: 1, maximum: 20, default: 5, description: 'How many.' },
          mode: { type: 'string', enum: ['A', 'B'] },
          timeout: { type: 'string', maxLength: 64, pattern: '^(h|m)$' },
          names: { type: 'array', maxItems: 100, items: { type: 'string', maxLength: 253 } },
          ports: { type: 'array', items: { type: 'object', required: ['port'], properties: { port: { type: 'integer' } } } },
        },
      },
    },
  };
  const rows = fieldRows(root, 'spec');
  t.same(
    rows.map((r) => [r.path, r.type, r.defaultValue, r.validation, r.description]),
    [
      ['spec', 'object', '', '**required**', ''],
      ['spec.steps', 'int32', '`5`', '**required**; 1–20', 'How many.'],
      ['spec.mode', 'string', '', 'one of `A`, `B`', ''],
      ['spec.timeout', 'string', '', '≤ 64 characters; pattern `^(h|m)$`', ''],
      ['spec.names', 'string[]', '', '≤ 100 items; each ≤ 253 characters', ''],
      ['spec.ports', 'object[]', '', '', ''],
      ['spec.ports[].port', 'integer', '', '**required**', ''],
    ],
  );
  t.match(fieldTable(rows), '| `spec.timeout` | string |  | ≤ 64 characters; pattern `^(h\\|m)$` |  |', 'a | in a cell is escaped');
});

t.test('shared types are linked, not expanded', async (t) => {
  t.match(page, '| `spec.container` | [ContainerOverride](#containeroverride) |');
  t.match(page, '| `spec.config.env` | [EnvVar](#envvar)[] |');
  t.notMatch(page, '| `spec.container.image` |', 'ContainerOverride is documented once, under Shared types');
  t.match(page, '### ContainerOverride');
});
