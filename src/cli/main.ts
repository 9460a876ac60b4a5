// The entry point of the `kaos-operator` command (bin/kaos-operator.js imports the build of it).
import { text } from 'node:stream/consumers';
import { run } from './run.ts';

const code = await run(process.argv.slice(2), {
  stdout: (s) => process.stdout.write(s),
  stderr: (s) => process.stderr.write(s),
  readStdin: () => text(process.stdin),
  env: process.env,
});
process.exitCode = code;
