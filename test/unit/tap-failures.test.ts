// npm test repeats its failed tests at the end of its output (scripts/tap-failures.ts): each
// failed point once, with the subtests that lead to it and its diagnostic, never the subtests
// that merely contain it.
import t from 'tap';
import { formatFailures, tapFailures } from '../../scripts/tap-failures.ts';

// tap's own output for a file whose nested assertion fails, beside one that throws and one
// that times out (tap 21's format, trimmed of passing noise).
const TAP = `TAP version 14
1..1
# Subtest: test/unit/x.test.ts
    # Subtest: outer
        # Subtest: inner
            not ok 1 - one is two
              ---
              compare: ===
              at:
                fileName: test/unit/x.test.ts
                lineNumber: 3
              source: >
                import t from 'tap';
                -----------------------------------^
              diff: |
                -2
                +1
              ...
            
            ok 2 - fine
            1..2
        not ok 1 - inner # time=42.397ms
          ---
          at:
            fileName: test/unit/x.test.ts
          ...
        
        ok 2 - ok here
        1..2
    not ok 1 - outer # time=67.13ms
    # Subtest: thrower
        not ok 1 - boom
          ---
          stack: |
            Test.<anonymous> (test/unit/x.test.ts:6:39)
          ...
        1..1
    not ok 2 - thrower # time=3ms
    # Subtest: slow
        ok 1 - started
        1..1
    not ok 3 - slow # time=30000ms
      ---
      expired: TAP
      ...
    ok 4 - passing
    1..4
not ok 1 - test/unit/x.test.ts # time=400ms
`.split('\n');

t.test('each failed point once, with its path and diagnostic; a subtest failed without failures inside is itself the failure', async (t) => {
  const failures = tapFailures(TAP);
  t.same(failures.map((f) => [...f.path, f.name].join(' > ')), [
    'test/unit/x.test.ts > outer > inner > one is two',
    'test/unit/x.test.ts > thrower > boom',
    'test/unit/x.test.ts > slow',
  ]);
  t.same(failures[0]!.detail, ['compare: ===', 'at:', '  fileName: test/unit/x.test.ts', '  lineNumber: 3', 'diff: |', '  -2', '  +1'], 'the diagnostic without its source excerpt');
  t.same(failures[2]!.detail, ['expired: TAP']);
  t.same(tapFailures(TAP.filter((l) => !l.includes('not ok'))), [], 'a run without a failure has none');
});

t.test('formatted as TAP comments, at most the limit, then how many more', async (t) => {
  const text = formatFailures(tapFailures(TAP), 2);
  t.ok(text.split('\n').every((l) => l.startsWith('# ')), 'every line a comment: tap readers ignore them');
  t.match(text, /^# not ok test\/unit\/x\.test\.ts > outer > inner > one is two\n#     compare: ===/);
  t.match(text, /# … and 1 more \(above\)$/);
});
