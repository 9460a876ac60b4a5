#!/usr/bin/env node
// The `kaos-operator` command: plain JavaScript that any Node can parse, so that an old Node says
// what is wrong instead of failing on syntax; the work is in the build (dist/, from src/cli/).
const major = Number(process.versions.node.split('.')[0]);
if (major < 24) {
  process.stderr.write(`kaos-operator: needs Node.js 24 or later, this is ${process.version} (${process.execPath})\n`);
  process.exit(2);
}
import('../dist/cli/main.js').catch((err) => {
  if (err && err.code === 'ERR_MODULE_NOT_FOUND' && String(err.message).includes('dist/cli/main.js')) {
    process.stderr.write('kaos-operator: dist/cli/main.js is missing: run npm run build first\n');
  } else {
    process.stderr.write(`kaos-operator: ${err && err.stack ? err.stack : err}\n`);
  }
  process.exit(2);
});
