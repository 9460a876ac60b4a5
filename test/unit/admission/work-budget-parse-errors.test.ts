// Work budget: YAML that costs a parser most (one error per character, unclosed nesting, runs of
// keys, merge keys) at the schema's limit: in the LiteLLM config, to both webhooks and as the
// oldObject of an UPDATE; in every other free-text field, to the validating webhook.
import { PARSED_FIELDS } from '../../support/worst-cases.ts';
import { testWorkBudget } from '../../support/work-budget-test.ts';

await testWorkBudget('parse-errors', 'every hostile document', (c) => PARSED_FIELDS.includes(c.field) || (c.type === 'validate' && c.operation === 'CREATE'));
