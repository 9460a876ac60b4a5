import { Writable } from 'node:stream';
import t from 'tap';
import { createLogger } from '../../../src/server/pino-logger.ts';

t.test("a line names the logger as `logger`, so the object's `name` is the only `name`", async (t) => {
  const lines: string[] = [];
  const destination = new Writable({
    write(chunk: Buffer, _encoding, done) {
      lines.push(chunk.toString());
      done();
    },
  });
  const logger = createLogger({ destination });
  logger.info({ kind: 'Agent', namespace: 'ns', name: 'a1', object: { spec: { secret: 'x' } } }, 'reconciled');
  await new Promise((resolve) => setImmediate(resolve));
  t.equal(lines.length, 1);
  const line = lines[0] ?? '';
  t.equal(line.match(/"name":/g)?.length, 1, 'one name key in the JSON text');
  const parsed = JSON.parse(line) as Record<string, unknown>;
  t.equal(parsed.name, 'a1');
  t.equal(parsed.logger, 'kaos-operator');
  t.equal(parsed.level, 'info');
  t.equal(parsed.object, '[redacted]', 'an object passed by mistake is redacted');
});
