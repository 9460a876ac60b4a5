// Development certificates for the webhook server: a CA and a serving certificate it signs.
//
//   npm run certs -- [outDir] [--service NAME] [--namespace NS] [--san DNS:x|IP:y|x]... [--new-ca]
//
// Writes ca.crt, ca.key, tls.crt and tls.key (keys 0600) to outDir (default certs/dev/, which
// is gitignored; keys are never committed). The serving certificate covers IP:127.0.0.1,
// DNS:localhost and the in-cluster Service names <service>.<namespace>.svc and
// <service>.<namespace>.svc.cluster.local (service kaos-operator-webhook, namespace kaos-system;
// env WEBHOOK_SERVICE_NAME / WEBHOOK_SERVICE_NAMESPACE or the flags change them), plus any
// --san. An existing CA in outDir is reused, so a cluster that already trusts it (caBundle)
// keeps trusting the renewed serving certificate; --new-ca replaces it.
//
// Node has no API to create X.509 certificates, so this drives openssl (OPENSSL=/path to pick
// one); it says so clearly when openssl is missing.
import { execFile } from 'node:child_process';
import { X509Certificate, randomBytes } from 'node:crypto';
import { chmod, mkdir, mkdtemp, readFile, rename, rm, writeFile } from 'node:fs/promises';
import { isIP } from 'node:net';
import { tmpdir } from 'node:os';
import { dirname, join, resolve } from 'node:path';
import { fileURLToPath } from 'node:url';
import { parseArgs, promisify } from 'node:util';

const run = promisify(execFile);

export const DEFAULT_SERVICE_NAME = 'kaos-operator-webhook';
export const DEFAULT_SERVICE_NAMESPACE = 'kaos-system';
export const DEFAULT_OUT_DIR = join(dirname(fileURLToPath(import.meta.url)), 'dev');

export interface DevCertOptions {
  outDir: string;
  /** Extra subject alternative names, added to the defaults: "DNS:x", "IP:y", or a bare name or address. */
  sans?: readonly string[];
  serviceName?: string;
  namespace?: string;
  /** Make a new CA even if outDir holds one. Default false. */
  newCa?: boolean;
  /** Lifetime of the serving certificate. Default 365. */
  days?: number;
}

export interface DevCerts {
  /** The CA certificate, PEM: what a webhook configuration's caBundle holds (base64 of it). */
  caPem: string;
  caFile: string;
  certFile: string;
  keyFile: string;
}

/** The SANs every development serving certificate carries. */
export function defaultSans(serviceName = DEFAULT_SERVICE_NAME, namespace = DEFAULT_SERVICE_NAMESPACE): string[] {
  return ['IP:127.0.0.1', 'DNS:localhost', `DNS:${serviceName}.${namespace}.svc`, `DNS:${serviceName}.${namespace}.svc.cluster.local`];
}

/** "DNS:x" and "IP:y" pass through; a bare value becomes IP: or DNS: by its shape. */
export function normaliseSan(san: string): string {
  if (/^(DNS|IP):/.test(san)) return san;
  return isIP(san) === 0 ? `DNS:${san}` : `IP:${san}`;
}

export async function makeDevCerts(options: DevCertOptions): Promise<DevCerts> {
  const openssl = await findOpenssl();
  const outDir = resolve(options.outDir);
  const sans = [...new Set([...defaultSans(options.serviceName, options.namespace), ...(options.sans ?? []).map(normaliseSan)])];
  for (const san of sans) {
    if (!/^(DNS:[A-Za-z0-9*.-]+|IP:[0-9A-Fa-f:.]+)$/.test(san)) throw new Error(`invalid subject alternative name: ${san}`);
  }
  await mkdir(outDir, { recursive: true });
  const work = await mkdtemp(join(tmpdir(), 'kaos-certs-'));
  try {
    const caFile = join(outDir, 'ca.crt');
    const caKeyFile = join(outDir, 'ca.key');
    let ca = options.newCa === true ? undefined : await existingCa(caFile, caKeyFile);
    if (ca === undefined) {
      await run(openssl, ['ecparam', '-name', 'prime256v1', '-genkey', '-noout', '-out', join(work, 'ca.key')]);
      await run(openssl, [
        'req', '-x509', '-new', '-key', join(work, 'ca.key'), '-sha256', '-days', '3650',
        '-subj', '/O=kaos-operator development/CN=kaos-operator development CA',
        '-addext', 'basicConstraints=critical,CA:TRUE',
        '-addext', 'keyUsage=critical,keyCertSign,cRLSign',
        '-out', join(work, 'ca.crt'),
      ]);
      ca = { cert: await readFile(join(work, 'ca.crt'), 'utf8'), key: await readFile(join(work, 'ca.key'), 'utf8') };
    } else {
      await writeFile(join(work, 'ca.crt'), ca.cert);
      await writeFile(join(work, 'ca.key'), ca.key, { mode: 0o600 });
    }

    const primary = `${options.serviceName ?? DEFAULT_SERVICE_NAME}.${options.namespace ?? DEFAULT_SERVICE_NAMESPACE}.svc`;
    await writeFile(
      join(work, 'ext.cnf'),
      [
        'basicConstraints=critical,CA:FALSE',
        'keyUsage=critical,digitalSignature,keyEncipherment',
        'extendedKeyUsage=serverAuth',
        `subjectAltName=${sans.join(',')}`,
        '',
      ].join('\n'),
    );
    await run(openssl, ['ecparam', '-name', 'prime256v1', '-genkey', '-noout', '-out', join(work, 'tls.key')]);
    // PKCS#8, the form every TLS stack reads.
    await run(openssl, ['pkcs8', '-topk8', '-nocrypt', '-in', join(work, 'tls.key'), '-out', join(work, 'tls.p8')]);
    await run(openssl, ['req', '-new', '-key', join(work, 'tls.p8'), '-subj', `/CN=${primary}`, '-out', join(work, 'tls.csr')]);
    await run(openssl, [
      'x509', '-req', '-in', join(work, 'tls.csr'), '-CA', join(work, 'ca.crt'), '-CAkey', join(work, 'ca.key'),
      '-set_serial', `0x${randomBytes(16).toString('hex')}`, '-sha256', '-days', String(options.days ?? 365),
      '-extfile', join(work, 'ext.cnf'), '-out', join(work, 'tls.crt'),
    ]);

    // Key before certificate, each replaced by rename: a server watching outDir sees at worst
    // a new key with the old certificate for a moment, rejects that pair, and takes the next.
    await place(join(outDir, 'ca.key'), ca.key, 0o600);
    await place(caFile, ca.cert, 0o644);
    const keyFile = join(outDir, 'tls.key');
    const certFile = join(outDir, 'tls.crt');
    await place(keyFile, await readFile(join(work, 'tls.p8'), 'utf8'), 0o600);
    await place(certFile, await readFile(join(work, 'tls.crt'), 'utf8'), 0o644);
    return { caPem: ca.cert, caFile, certFile, keyFile };
  } finally {
    await rm(work, { recursive: true, force: true });
  }
}

async function findOpenssl(): Promise<string> {
  const openssl = process.env.OPENSSL ?? 'openssl';
  try {
    await run(openssl, ['version']);
  } catch (err) {
    throw new Error(
      `openssl is needed to make certificates but "${openssl}" could not be run (${(err as Error).message}); ` +
        'install it (Debian/Ubuntu: apt-get install openssl) or set OPENSSL to its path',
      { cause: err },
    );
  }
  return openssl;
}

/** The CA in outDir, if both files are there and still valid for a while. */
async function existingCa(caFile: string, keyFile: string): Promise<{ cert: string; key: string } | undefined> {
  try {
    const [cert, key] = await Promise.all([readFile(caFile, 'utf8'), readFile(keyFile, 'utf8')]);
    const x509 = new X509Certificate(cert);
    const thirtyDays = 30 * 24 * 3600 * 1000;
    if (!x509.ca || Date.parse(x509.validTo) - Date.now() < thirtyDays) return undefined;
    return { cert, key };
  } catch {
    return undefined;
  }
}

async function place(path: string, content: string, mode: number): Promise<void> {
  const tmp = `${path}.${process.pid}.tmp`;
  await writeFile(tmp, content, { mode });
  await chmod(tmp, mode); // writeFile's mode is filtered by the umask
  await rename(tmp, path);
}

async function main(argv: string[]): Promise<void> {
  const { values, positionals } = parseArgs({
    args: argv,
    allowPositionals: true,
    options: {
      service: { type: 'string', default: process.env.WEBHOOK_SERVICE_NAME ?? DEFAULT_SERVICE_NAME },
      namespace: { type: 'string', default: process.env.WEBHOOK_SERVICE_NAMESPACE ?? DEFAULT_SERVICE_NAMESPACE },
      san: { type: 'string', multiple: true, default: [] },
      'new-ca': { type: 'boolean', default: false },
      days: { type: 'string', default: '365' },
    },
  });
  const days = Number(values.days);
  if (!Number.isInteger(days) || days <= 0) throw new Error(`--days must be a positive integer, got "${values.days}"`);
  const certs = await makeDevCerts({
    outDir: positionals[0] ?? DEFAULT_OUT_DIR,
    sans: values.san,
    serviceName: values.service,
    namespace: values.namespace,
    newCa: values['new-ca'],
    days,
  });
  const info = new X509Certificate(await readFile(certs.certFile));
  process.stdout.write(
    `wrote ${certs.caFile}, ${certs.certFile}, ${certs.keyFile}\n` +
      `serving certificate for ${info.subjectAltName ?? ''}, valid until ${info.validTo}\n` +
      `caBundle: base64 -w0 ${certs.caFile}\n`,
  );
}

if (import.meta.main) {
  main(process.argv.slice(2)).catch((err: unknown) => {
    process.stderr.write(`make-dev-certs: ${(err as Error).message}\n`);
    process.exitCode = 1;
  });
}
