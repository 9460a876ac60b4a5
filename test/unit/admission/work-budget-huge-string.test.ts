// Work budget: a huge string at every string of every kind's schema (and the metadata the
// webhooks read), of every character, at the schema's limit; past it (1 MiB), of `"`, which JSON
// doubles and YAML reads as a scalar's end.
import { testWorkBudget } from '../../support/work-budget-test.ts';

await testWorkBudget('huge-string', 'every field, every character', (c) => !c.past || c.variant === '"');
