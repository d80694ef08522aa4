import { generateKeyPairSync, randomBytes } from 'node:crypto';
import { existsSync, lstatSync, mkdirSync, readdirSync, renameSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir, userInfo } from 'node:os';
import { dirname, join } from 'node:path';
import forge from 'node-forge';
import { loadSigningKey, loadVerifyKey } from './caller-context.js';
import { DEVELOPMENT_CA_NAME, MESH_IDENTITIES, loadMeshTls, meshUri, type MeshIdentity, type MeshTls } from './identity.js';

/**
 * The development mesh PKI: a CA and one certificate per identity, made here with node-forge
 * (no download, no openssl), for `npm run up`, the test harnesses, the fault suite and the
 * benchmark. Never used in production: `meshTlsFromEnv` refuses its CA there.
 *
 * Layout: `<root>/<identity>/{ca.crt,tls.crt,tls.key}`, the layout of a cert-manager Secret, so
 * `MESH_TLS_DIR=<root>/<identity>` reads it the same way as in the cluster. The root is named by
 * month (certificates last 62 days), so every process of a machine shares one PKI and a stale one
 * is never used; it is written to a temporary directory and renamed into place, so processes
 * starting together never see half of one.
 */
const VALID_DAYS = 62;

/** `base`: where the PKIs of this machine live (default: a directory of this user under the OS temporary directory). */
export function devPkiRoot(base?: string, now = new Date()): string {
  // The version changes whenever MESH_IDENTITIES grows (v3: `reconciliation`): a PKI made before
  // has no certificate for the new identity and cannot be completed in place (it is renamed in whole).
  return join(base ?? join(tmpdir(), `wallet-dev-pki-${safeUser()}`), `v3-${now.toISOString().slice(0, 7)}`);
}

function safeUser(): string {
  try {
    return userInfo().username.replace(/[^A-Za-z0-9_-]/g, '_');
  } catch {
    return 'user';
  }
}

/** The development caller-context key pair (Ed25519) of a PKI: the gateway signs with `private.pem`, the services verify with `public.pem`. */
export function devCallerContextKeyFiles(root: string): { privateKeyFile: string; publicKeyFile: string } {
  return { privateKeyFile: join(root, 'caller-context', 'private.pem'), publicKeyFile: join(root, 'caller-context', 'public.pem') };
}

/**
 * Makes the development PKI if this month's is not there (the CA, one certificate per identity,
 * the caller-context key pair, written together and renamed into place); returns its root.
 * `identities`: fewer, for a test's throw-away PKI.
 */
export function ensureDevPki(root = devPkiRoot(), identities: readonly MeshIdentity[] = MESH_IDENTITIES): string {
  const complete = () => existsSync(devCallerContextKeyFiles(root).publicKeyFile) && identities.every((id) => existsSync(join(root, id, 'tls.key')));
  if (complete()) return checkDevPkiOwnership(root);
  const staging = `${root}.tmp-${process.pid}-${randomBytes(4).toString('hex')}`;
  mkdirSync(staging, { recursive: true, mode: 0o700 });
  try {
    const ca = makeCa();
    const caPem = forge.pki.certificateToPem(ca.cert);
    for (const id of identities) {
      const leaf = makeLeaf(id, ca);
      mkdirSync(join(staging, id), { mode: 0o700 });
      writeFileSync(join(staging, id, 'ca.crt'), caPem);
      writeFileSync(join(staging, id, 'tls.crt'), forge.pki.certificateToPem(leaf.cert));
      writeFileSync(join(staging, id, 'tls.key'), forge.pki.privateKeyToPem(leaf.key), { mode: 0o600 });
    }
    const keys = devCallerContextKeyFiles(staging);
    const { privateKey, publicKey } = generateKeyPairSync('ed25519', {
      privateKeyEncoding: { type: 'pkcs8', format: 'pem' },
      publicKeyEncoding: { type: 'spki', format: 'pem' },
    });
    mkdirSync(dirname(keys.privateKeyFile), { mode: 0o700 });
    writeFileSync(keys.privateKeyFile, privateKey, { mode: 0o600 });
    writeFileSync(keys.publicKeyFile, publicKey);
    try {
      renameSync(staging, root);
    } catch (err) {
      // Another process won the race: use its PKI.
      if (!complete()) throw err;
    }
  } finally {
    rmSync(staging, { recursive: true, force: true });
  }
  return checkDevPkiOwnership(root);
}

/** A private key file: readable by its owner only. */
const PRIVATE = /(^|\/)(tls\.key|private\.pem)$/;

/**
 * docs/security.md "The development mesh PKI on a shared machine": the development PKI lives in a shared temporary directory, so another local
 * user could plant one there (the gateway's signing key included) for our processes to trust. Every
 * directory and file of it must be ours (the current uid), not writable by group or others, and its private keys readable by us alone; a symbolic link is refused.
 * Anything else is refused, naming the path: the PKI is never loaded, never silently replaced.
 */
export function checkDevPkiOwnership(root: string): string {
  const uid = typeof process.getuid === 'function' ? process.getuid() : undefined;
  if (uid === undefined) return root; // no POSIX owners (Windows): nothing to compare
  const refuse = (path: string, why: string): never => {
    throw new Error(`refusing the development mesh PKI at ${path}: ${why}; remove ${dirname(root)} and start again`);
  };
  const check = (path: string): void => {
    const st = lstatSync(path);
    if (st.isSymbolicLink()) refuse(path, 'it is a symbolic link');
    if (st.uid !== uid) refuse(path, `it is owned by uid ${st.uid}, not by this user (uid ${uid})`);
    if ((st.mode & 0o022) !== 0) refuse(path, `it is writable by ${st.mode & 0o002 ? 'others' : 'its group'} (mode ${(st.mode & 0o777).toString(8)})`);
    if (st.isFile() && PRIVATE.test(path) && (st.mode & 0o077) !== 0) refuse(path, `a private key readable by others (mode ${(st.mode & 0o777).toString(8)})`);
    if (st.isDirectory()) for (const entry of readdirSync(path)) check(join(path, entry));
  };
  // The directory holding it may be shared (a volume, /tmp): whoever swaps the PKI in it cannot make its contents ours.
  check(root);
  return root;
}

/** The development credentials of one identity (made on first use). */
export function devMeshTls(identity: MeshIdentity, base?: string): MeshTls {
  const root = ensureDevPki(devPkiRoot(base));
  const keys = devCallerContextKeyFiles(root);
  return loadMeshTls(join(root, identity), identity, {
    verifyKey: loadVerifyKey(keys.publicKeyFile),
    ...(identity === 'gateway' ? { signingKey: loadSigningKey(keys.privateKeyFile) } : {}),
  });
}

interface Issued {
  cert: forge.pki.Certificate;
  key: forge.pki.rsa.PrivateKey;
}

function validity(cert: forge.pki.Certificate): void {
  cert.serialNumber = `01${randomBytes(15).toString('hex')}`;
  cert.validity.notBefore = new Date(Date.now() - 60 * 60_000);
  cert.validity.notAfter = new Date(Date.now() + VALID_DAYS * 86_400_000);
}

/** RSA keys from Node's own (native) generator; forge only builds and signs the certificates. */
function rsaKeys(): { publicKey: forge.pki.rsa.PublicKey; privateKey: forge.pki.rsa.PrivateKey } {
  const { publicKey, privateKey } = generateKeyPairSync('rsa', {
    modulusLength: 2048,
    publicKeyEncoding: { type: 'spki', format: 'pem' },
    privateKeyEncoding: { type: 'pkcs8', format: 'pem' },
  });
  return {
    publicKey: forge.pki.publicKeyFromPem(publicKey) as forge.pki.rsa.PublicKey,
    privateKey: forge.pki.privateKeyFromPem(privateKey) as forge.pki.rsa.PrivateKey,
  };
}

function makeCa(): Issued {
  const keys = rsaKeys();
  const cert = forge.pki.createCertificate();
  cert.publicKey = keys.publicKey;
  validity(cert);
  const subject = [
    { name: 'commonName', value: DEVELOPMENT_CA_NAME },
    { name: 'organizationName', value: 'Wallet development' },
  ];
  cert.setSubject(subject);
  cert.setIssuer(subject);
  cert.setExtensions([
    { name: 'basicConstraints', cA: true, pathLenConstraint: 0, critical: true },
    { name: 'keyUsage', keyCertSign: true, cRLSign: true, critical: true },
    { name: 'subjectKeyIdentifier' },
  ]);
  cert.sign(keys.privateKey, forge.md.sha256.create());
  return { cert, key: keys.privateKey };
}

function makeLeaf(identity: MeshIdentity, ca: Issued): Issued {
  const keys = rsaKeys();
  const cert = forge.pki.createCertificate();
  cert.publicKey = keys.publicKey;
  validity(cert);
  cert.setSubject([
    { name: 'commonName', value: identity },
    { name: 'organizationName', value: 'Wallet development' },
  ]);
  cert.setIssuer(ca.cert.subject.attributes);
  cert.setExtensions([
    { name: 'basicConstraints', cA: false, critical: true },
    { name: 'keyUsage', digitalSignature: true, keyEncipherment: true, critical: true },
    { name: 'extKeyUsage', serverAuth: true, clientAuth: true },
    // The identity, and the names a client may dial on a laptop or in the test stack.
    {
      name: 'subjectAltName',
      altNames: [
        { type: 6, value: meshUri(identity) },
        { type: 2, value: 'localhost' },
        { type: 2, value: identity },
        { type: 7, ip: '127.0.0.1' },
        { type: 7, ip: '::1' },
      ],
    },
    { name: 'authorityKeyIdentifier', keyIdentifier: ca.cert.generateSubjectKeyIdentifier().getBytes() },
  ]);
  cert.sign(ca.key, forge.md.sha256.create());
  return { cert, key: keys.privateKey };
}
