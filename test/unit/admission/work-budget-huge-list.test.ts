// Work budget: a huge list at every list of every kind's schema, of every element, at maxItems and
// past it (20,000); and in the opaque podSpec, whose lists the podSpec merge keys, as long as the
// body limit allows (150,000 env entries, 5 MiB).
import { testWorkBudget } from '../../support/work-budget-test.ts';

await testWorkBudget('huge-list', 'every list, every element');
