// What the operator's bundles (dist/main.js, dist/admission-worker.js) hold in place of the
// packages of express that they never call: its body parsers, its static file server and the MIME
// table behind res.send, res.json, res.type and req.is (scripts/build.ts, LEFT_OUT_OF_BUNDLE). The
// servers read bodies themselves (src/server/body.ts) and answer with Node's writeHead and end.
// Express reads their exports when it loads, which is harmless; calling one throws, so that a
// use of them added later fails at once with this message rather than in some odd way.
'use strict';

function leftOut() {
  throw new Error(
    "this package of express is not in the operator's bundle (scripts/build.ts, LEFT_OUT_OF_BUNDLE): read bodies with src/server/body.ts, answer with writeHead and end",
  );
}

module.exports = new Proxy(leftOut, {
  get(target, key) {
    return typeof key === 'symbol' || key === 'prototype' ? Reflect.get(target, key) : leftOut;
  },
});
