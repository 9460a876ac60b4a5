// Work budget: a huge list at every list of every kind's schema, of every element, at maxItems and
// past it (20,000); and in the opaque podSpec, whose lists the podSpec merge keys. Of the lists as
// long as the largest object holds, a container's env in the podSpec (merged by name, created and
// updated): 20,000 items already show any cost worse than linear, and `npm run bench:budget`
// measures them all.
import { testWorkBudget } from '../../support/work-budget-test.ts';

await testWorkBudget('huge-list', 'every list, every element', (c) => !c.fills || (c.field === 'spec.podSpec.containers[0].env' && c.variant === 'env-entry'));
