// Throwaway CAs and serving certificates for tests, in a temporary directory that cleanup()
// removes. A thin wrapper over certs/make-dev-certs.ts, so tests exercise the same tool.
import { mkdtemp, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { makeDevCerts, type DevCertOptions, type DevCerts } from '../../certs/make-dev-certs.ts';

export interface TestCerts extends DevCerts {
  dir: string;
  /** Issues another serving certificate from the same CA into the same directory. */
  renew(): Promise<DevCerts>;
  cleanup(): Promise<void>;
}

export async function makeTestCerts(options: Omit<DevCertOptions, 'outDir'> = {}): Promise<TestCerts> {
  const dir = await mkdtemp(join(tmpdir(), 'kaos-test-certs-'));
  const certs = await makeDevCerts({ ...options, outDir: dir, newCa: true });
  return {
    ...certs,
    dir,
    renew: () => makeDevCerts({ ...options, outDir: dir, newCa: false }),
    cleanup: () => rm(dir, { recursive: true, force: true }),
  };
}
