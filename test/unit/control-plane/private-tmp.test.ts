// The command that gives kube-controller-manager a private /tmp (test/cluster/private-tmp.ts):
// which directories it keeps in view, and how it asks for the namespace as root or not. That the
// mounts work is shown end to end (test/e2e/persistent-volumes.test.ts: volumes land in the
// control plane's directory).
import t from 'tap';
import { outsidePath, privateTmpCommand, unshareFlags } from '../../cluster/private-tmp.ts';

/** The directories kept in view and the command run, read back from the command line. */
function parse(args: readonly string[]): { flags: string[]; tmp: string; kept: string[][]; command: string[] } {
  const sh = args.indexOf('sh');
  const rest = args.slice(sh + 4); // sh -c SCRIPT $0
  const end = rest.indexOf('--');
  const pairs = rest.slice(1, end);
  const kept: string[][] = [];
  for (let i = 0; i < pairs.length; i += 2) kept.push([pairs[i] ?? '', pairs[i + 1] ?? '']);
  return { flags: args.slice(0, sh), tmp: rest[0] ?? '', kept, command: rest.slice(end + 1) };
}

t.test('keeps in view the directories under /tmp, at their path relative to it', async (t) => {
  const cmd = privateTmpCommand('/tmp/kaos-cp-a/kcm-tmp', ['/tmp/kaos-cp-a', '/opt/bin'], '/opt/bin/kcm', ['--x=1'], 0);
  t.equal(cmd.file, 'unshare');
  t.same(parse(cmd.args), { flags: ['--mount'], tmp: '/tmp/kaos-cp-a/kcm-tmp', kept: [['/tmp/kaos-cp-a', 'kaos-cp-a']], command: ['/opt/bin/kcm', '--x=1'] });
});

t.test('each directory once; one inside another goes with it; /tmp itself and its look-alikes are not under it', async (t) => {
  const keep = ['/tmp/root/cp', '/tmp/root', '/tmp/root/cp', '/tmp/bin', '/tmpfoo/x', '/tmp', '/var/tmp/y'];
  t.same(parse(privateTmpCommand('/tmp/root/cp/kcm-tmp', keep, 'kcm', [], 0).args).kept, [['/tmp/root', 'root'], ['/tmp/bin', 'bin']]);
  t.same(parse(privateTmpCommand('/var/tmp/cp/kcm-tmp', ['/var/tmp/cp'], 'kcm', [], 0).args).kept, [], 'nothing to keep outside /tmp');
});

t.test('as root a mount namespace; otherwise a user namespace with the user as root in it', async (t) => {
  t.same(unshareFlags(0), ['--mount']);
  t.same(unshareFlags(1000), ['--user', '--map-root-user', '--mount']);
  t.same(parse(privateTmpCommand('/x', [], 'kcm', [], 1000).args).flags, ['--user', '--map-root-user', '--mount']);
});

t.test('a path under the private /tmp, as seen outside it', async (t) => {
  t.equal(outsidePath('/tmp/kaos-cp-a/kcm-tmp', '/tmp/hostpath_pv/123'), '/tmp/kaos-cp-a/kcm-tmp/hostpath_pv/123');
  t.equal(outsidePath('/tmp/kaos-cp-a/kcm-tmp', '/var/data'), '/var/data', 'elsewhere, the same path');
  t.equal(outsidePath('/tmp/kaos-cp-a/kcm-tmp', '/tmpfoo/x'), '/tmpfoo/x');
});
