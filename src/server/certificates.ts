// Loading the serving certificate from a kubernetes.io/tls Secret mount (tls.crt + tls.key) and
// noticing when it changes. cert-manager renews certificates and the kubelet swaps the mount's
// `..data` symlink to publish them, so the directory is watched (any event, debounced) and also
// checked on a timer, because directory watches miss changes behind symlinks and die with the
// directory. A pair that does not load (half written, key not matching) is reported once and
// the previous pair stays in service; the next change is tried again.
import { X509Certificate, createHash, createPrivateKey } from 'node:crypto';
import { watch, type FSWatcher } from 'node:fs';
import { readFile } from 'node:fs/promises';
import { join } from 'node:path';
import { createSecureContext } from 'node:tls';
import { errorMessage } from '../leaves/error-message.ts';

export const CERT_FILE = 'tls.crt';
export const KEY_FILE = 'tls.key';

export interface CertificateInfo {
  fingerprint256: string;
  subject: string;
  subjectAltName: string;
  validFrom: string;
  validTo: string;
}

export interface CertificatePair {
  cert: Buffer;
  key: Buffer;
  /** SHA-256 of both files: equal hashes mean nothing changed. */
  hash: string;
  info: CertificateInfo;
}

export class CertificateError extends Error {
  constructor(message: string, options?: ErrorOptions) {
    super(message, options);
    this.name = 'CertificateError';
  }
}

interface RawPair {
  cert: Buffer;
  key: Buffer;
  hash: string;
}

async function readRaw(certDir: string): Promise<RawPair> {
  const certPath = join(certDir, CERT_FILE);
  const keyPath = join(certDir, KEY_FILE);
  let cert: Buffer;
  let key: Buffer;
  try {
    [cert, key] = await Promise.all([readFile(certPath), readFile(keyPath)]);
  } catch (err) {
    throw new CertificateError(`cannot read ${CERT_FILE} and ${KEY_FILE} in ${certDir}: ${errorMessage(err)}`, { cause: err });
  }
  const hash = createHash('sha256').update(cert).update('\0').update(key).digest('hex');
  return { cert, key, hash };
}

/** Parses and checks a pair; throws CertificateError saying what is wrong with it. */
function checkPair(raw: RawPair, certDir: string): CertificatePair {
  let x509: X509Certificate;
  try {
    x509 = new X509Certificate(raw.cert);
  } catch (err) {
    throw new CertificateError(`${join(certDir, CERT_FILE)} is not a PEM certificate: ${errorMessage(err)}`, { cause: err });
  }
  try {
    const key = createPrivateKey(raw.key);
    if (!x509.checkPrivateKey(key)) {
      throw new CertificateError(`${join(certDir, KEY_FILE)} does not match the certificate in ${CERT_FILE}`);
    }
    // What the TLS server will do with the pair: catches chains and keys OpenSSL refuses.
    createSecureContext({ cert: raw.cert, key: raw.key });
  } catch (err) {
    if (err instanceof CertificateError) throw err;
    throw new CertificateError(`${join(certDir, KEY_FILE)} is not a usable private key for ${CERT_FILE}: ${errorMessage(err)}`, {
      cause: err,
    });
  }
  return {
    cert: raw.cert,
    key: raw.key,
    hash: raw.hash,
    info: {
      fingerprint256: x509.fingerprint256,
      // cert-manager issues certificates with SANs only: an empty subject, which node reports as undefined.
      subject: (x509.subject ?? '').replaceAll('\n', ', '),
      subjectAltName: x509.subjectAltName ?? '',
      validFrom: x509.validFrom,
      validTo: x509.validTo,
    },
  };
}

export async function loadCertificatePair(certDir: string): Promise<CertificatePair> {
  return checkPair(await readRaw(certDir), certDir);
}

export type CertificateCheck =
  | { outcome: 'unchanged' }
  | { outcome: 'reloaded'; info: CertificateInfo }
  /** `reported` is false when the same failure was already reported. */
  | { outcome: 'rejected'; error: CertificateError; reported: boolean };

export interface CertificateWatcherOptions {
  certDir: string;
  /** The pair in service now. */
  current: CertificatePair;
  /** Puts a new pair into service; may throw, which rejects the pair. */
  apply: (pair: CertificatePair) => void;
  /** Told about each reload and each new failure. */
  onReload: (info: CertificateInfo) => void;
  onReject: (error: CertificateError) => void;
  intervalMs: number;
  /** Quiet time after the last file event before reading; a symlink swap is several events. */
  debounceMs?: number;
}

export interface CertificateWatcher {
  /** Reads the files now; concurrent calls share one read. */
  check(): Promise<CertificateCheck>;
  stop(): void;
}

export function watchCertificates(options: CertificateWatcherOptions): CertificateWatcher {
  const { certDir, apply, onReload, onReject } = options;
  const debounceMs = options.debounceMs ?? 100;
  let servingHash = options.current.hash;
  /** The failure last reported, so that a bad pair is reported once, not on every tick. */
  let reportedFailure: string | undefined;
  let running: Promise<CertificateCheck> | undefined;
  let rerun = false;
  let stopped = false;
  let watcher: FSWatcher | undefined;
  let debounce: NodeJS.Timeout | undefined;

  const checkOnce = async (): Promise<CertificateCheck> => {
    let pair: CertificatePair;
    let failureKey: string | undefined;
    try {
      const raw = await readRaw(certDir);
      if (raw.hash === servingHash) {
        reportedFailure = undefined;
        return { outcome: 'unchanged' };
      }
      failureKey = raw.hash;
      if (failureKey === reportedFailure) {
        return { outcome: 'rejected', error: new CertificateError('the same pair was rejected before'), reported: false };
      }
      pair = checkPair(raw, certDir);
      apply(pair);
    } catch (err) {
      const error = err instanceof CertificateError ? err : new CertificateError(errorMessage(err), { cause: err });
      // Unreadable files have no hash: key the report on the message instead.
      const key = failureKey ?? error.message;
      const reported = key !== reportedFailure;
      reportedFailure = key;
      if (reported && !stopped) onReject(error);
      return { outcome: 'rejected', error, reported };
    }
    servingHash = pair.hash;
    reportedFailure = undefined;
    if (!stopped) onReload(pair.info);
    return { outcome: 'reloaded', info: pair.info };
  };

  const check = (): Promise<CertificateCheck> => {
    if (running !== undefined) {
      rerun = true; // files may have changed after the running read started
      return running;
    }
    running = (async () => {
      let result: CertificateCheck;
      do {
        rerun = false;
        result = await checkOnce();
      } while (rerun && !stopped);
      running = undefined;
      return result;
    })();
    return running;
  };

  const onEvent = (): void => {
    if (debounce !== undefined) clearTimeout(debounce);
    debounce = setTimeout(() => {
      debounce = undefined;
      void check();
    }, debounceMs);
    debounce.unref();
  };

  const startWatch = (): void => {
    if (watcher !== undefined || stopped) return;
    try {
      watcher = watch(certDir, { persistent: false }, onEvent);
      watcher.on('error', () => {
        // The directory went away (or was replaced): fall back to the timer, which re-watches.
        watcher?.close();
        watcher = undefined;
      });
    } catch {
      watcher = undefined;
    }
  };

  startWatch();
  const timer = setInterval(() => {
    startWatch();
    void check();
  }, options.intervalMs);
  timer.unref();

  return {
    check,
    stop() {
      stopped = true;
      clearInterval(timer);
      if (debounce !== undefined) clearTimeout(debounce);
      watcher?.close();
      watcher = undefined;
    },
  };
}
