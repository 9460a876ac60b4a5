// node:http, loaded with require() rather than an ES import. Importing a builtin as an ES module
// builds its namespace object, which reads every export, the lazy ones too: for node:http that
// loads Node's fetch (undici, a 745 KiB bundle kept as source text), http2 and worker_threads,
// none of which the operator uses: 3.5 MiB of resident memory for nothing (docs/benchmarks.md,
// "Memory"). require() evaluates only node:http itself. `import type` from node:http stays free.
import { createRequire } from 'node:module';

export const http = createRequire(import.meta.url)('node:http') as typeof import('node:http');
