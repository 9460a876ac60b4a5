import t from 'tap';
import {
  duplicate,
  FieldError,
  forbidden,
  invalid,
  invalidOmitValue,
  notFound,
  notSupported,
  required,
  tooLong,
  tooMany,
  typeInvalid,
} from '../../../src/api/field-error.ts';
import { goJSON, goQuote, goValue } from '../../../src/api/go-format.ts';
import { aggregateMessage, invalidStatus } from '../../../src/api/validation/invalid-status.ts';

t.test('goQuote is strconv.Quote', async (t) => {
  t.equal(goQuote('gpt'), '"gpt"');
  t.equal(goQuote('a "b" \\c'), '"a \\"b\\" \\\\c"');
  t.equal(goQuote('tab\there\nnl\r\u0007\b\f\v'), '"tab\\there\\nnl\\r\\a\\b\\f\\v"');
  t.equal(goQuote('\u0001\u007f'), '"\\x01\\x7f"');
  t.equal(goQuote('héllo ✓ 😀'), '"héllo ✓ 😀"', 'printable unicode stays as is');
  t.equal(goQuote('\u00a0\u2028'), '"\\u00a0\\u2028"', 'non-printable unicode is escaped');
  t.equal(goQuote('\u{e0001}'), '"\\U000e0001"');
  t.equal(goQuote('\ud800'), '"\ufffd"', 'a lone surrogate reads as Go reads invalid UTF-8 from JSON');
});

t.test('goJSON is encoding/json: sorted keys, HTML-safe', async (t) => {
  t.equal(goJSON({ b: 1, a: { d: [1, '<&>'], c: null } }), '{"a":{"c":null,"d":[1,"\\u003c\\u0026\\u003e"]},"b":1}');
  t.equal(goJSON(undefined), 'null');
  t.equal(goValue('x'), '"x"');
  t.equal(goValue(50), '50');
  t.equal(goValue(1.5), '1.5');
  t.equal(goValue(false), 'false');
  t.equal(goValue(null), 'null');
  t.equal(goValue(['a']), '["a"]');
});

t.test('goJSON with a bound writes the start of the same text, and no more of it', async (t) => {
  const value = { list: Array.from({ length: 20_000 }, (_, i) => ({ name: `VAR_${i}`, value: '<&>', [String(i % 3)]: 'x\u{1f642}' })), a: 'x' };
  const whole = goJSON(value);
  for (const max of [0, 1, 50, 256, 1000]) {
    const start = goJSON(value, max);
    t.equal(start.slice(0, max), whole.slice(0, max), `the first ${max} characters are goJSON's`);
    t.ok(start.length > max && start.length < max + 64, `longer than ${max} characters, by little: ${start.length}`);
  }
  t.equal(goJSON({ b: [1, 'x'] }, 13), '{"b":[1,"x"]}', 'a text within the bound is whole');
  t.equal(goValue(value, 256).slice(0, 256), whole.slice(0, 256));
});

t.test('each error type prints as apimachinery field.Error does', async (t) => {
  const cases: Array<[FieldError, string]> = [
    [required('spec.mode'), 'spec.mode: Required value'],
    [required('spec.proxyConfig', 'required when mode is Proxy'), 'spec.proxyConfig: Required value: required when mode is Proxy'],
    [notFound('spec.modelAPI', 'gpt'), 'spec.modelAPI: Not found: "gpt"'],
    [notFound('spec.mcpServers[1]', 'x'), 'spec.mcpServers[1]: Not found: "x"'],
    [duplicate('spec.mcpServers[2]', 'x'), 'spec.mcpServers[2]: Duplicate value: "x"'],
    [duplicate('spec.config.env[1]', { name: 'A' }), 'spec.config.env[1]: Duplicate value: {"name":"A"}'],
    [invalid('spec.agentNetwork.access[0]', 'a1', 'an agent cannot list itself'), 'spec.agentNetwork.access[0]: Invalid value: "a1": an agent cannot list itself'],
    [invalid('spec.config.reasoningLoopMaxSteps', 50, 'too big'), 'spec.config.reasoningLoopMaxSteps: Invalid value: 50: too big'],
    [invalid('spec.x', true, 'no'), 'spec.x: Invalid value: true: no'],
    [invalidOmitValue('spec.x', 'must be valid YAML'), 'spec.x: Invalid value: must be valid YAML'],
    [notSupported('spec.mode', 'x', ['Hosted', 'Proxy']), 'spec.mode: Unsupported value: "x": supported values: "Hosted", "Proxy"'],
    [notSupported('spec.mode', 5, ['Hosted']), 'spec.mode: Unsupported value: 5: supported values: "Hosted"'],
    [forbidden('spec.hostedConfig', 'may not be set when mode is Proxy'), 'spec.hostedConfig: Forbidden: may not be set when mode is Proxy'],
    [tooLong('spec.x', 253), 'spec.x: Too long: may not be more than 253 bytes'],
    [tooLong('spec.x', 1), 'spec.x: Too long: may not be more than 1 byte'],
    [tooMany('spec.x', 5, 3), 'spec.x: Too many: 5: must have at most 3 items'],
    [typeInvalid('spec.modelAPI', 'integer', 'spec.modelAPI in body must be of type string: "integer"'), 'spec.modelAPI: Invalid value: "integer": spec.modelAPI in body must be of type string: "integer"'],
  ];
  for (const [error, text] of cases) {
    t.equal(error.errorString(), text);
    t.equal(`${error}`, text, 'toString');
    t.equal(error.errorBody(), text.slice(error.field.length + 2), 'the body is the text after "<field>: "');
  }
  t.equal(required('spec.x').type, 'FieldValueRequired');
  t.equal(typeInvalid('spec.x', 'a', 'b').type, 'FieldValueTypeInvalid');
});

t.test('the denial is errors.NewInvalid', async (t) => {
  const one = invalidStatus('Agent', 'a1', [notFound('spec.modelAPI', 'gpt')]);
  t.same(one, {
    metadata: {},
    status: 'Failure',
    message: 'Agent.kaos.tools "a1" is invalid: spec.modelAPI: Not found: "gpt"',
    reason: 'Invalid',
    code: 422,
    details: {
      name: 'a1',
      group: 'kaos.tools',
      kind: 'Agent',
      causes: [{ reason: 'FieldValueNotFound', field: 'spec.modelAPI', message: 'Not found: "gpt"' }],
    },
  });

  const two = invalidStatus('Agent', 'a1', [
    notFound('spec.modelAPI', 'gpt'),
    invalid('spec.agentNetwork.access[0]', 'a1', 'an agent cannot list itself'),
  ]);
  t.equal(
    two.message,
    'Agent.kaos.tools "a1" is invalid: [spec.modelAPI: Not found: "gpt", spec.agentNetwork.access[0]: Invalid value: "a1": an agent cannot list itself]',
  );
  t.equal(two.details?.causes?.length, 2);
  // What kubectl prints from the causes: "The Agent "a1" is invalid:" then "* <field>: <message>".
  t.same(
    two.details?.causes?.map((c) => `* ${c.field}: ${c.message}`),
    ['* spec.modelAPI: Not found: "gpt"', '* spec.agentNetwork.access[0]: Invalid value: "a1": an agent cannot list itself'],
  );
  t.equal(invalidStatus('ModelAPI', 'm"1', []).message, 'ModelAPI.kaos.tools "m\\"1" is invalid', 'the name is %q-quoted');
});

t.test('the aggregate drops repeated messages, as ToAggregate does, but causes keep them', async (t) => {
  const e = notFound('spec.modelAPI', 'gpt');
  t.equal(aggregateMessage([e, notFound('spec.modelAPI', 'gpt')]), 'spec.modelAPI: Not found: "gpt"');
  t.equal(invalidStatus('Agent', 'a', [e, e]).details?.causes?.length, 2);
});
