// Work budget: maps no schema bounds (podSpec.nodeSelector, container.resources, labels,
// annotations, the spec itself) with as many keys as the body's width limit allows, with 200,000
// keys, and with one key of 1 MiB.
import { testWorkBudget } from '../../support/work-budget-test.ts';

await testWorkBudget('many-keys', 'every unbounded map');
