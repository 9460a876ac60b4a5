// Work budget: every object and list of every kind's schema (and the podSpec's lists) nested as
// deep as the body's depth limit allows, and 20,000 levels deep, in every shape.
import { testWorkBudget } from '../../support/work-budget-test.ts';

await testWorkBudget('deep-nesting', 'every object and list, every shape');
