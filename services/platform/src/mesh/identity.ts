import { X509Certificate, type KeyObject } from 'node:crypto';
import { readFileSync } from 'node:fs';
import { join } from 'node:path';

/**
 * Who a process is inside the cluster. Every process holds its own certificate from the mesh CA
 * (cert-manager in Kubernetes, the development CA of dev-pki.ts on a laptop and in the tests); its
 * identity is the URI SAN `spiffe://wallet/<name>`. gRPC servers require a client certificate from
 * the same CA and authorise each method by the caller's identity (access.ts); clients check that
 * the server they reached is the one they meant (not just any certificate of the CA).
 */
export const MESH_TRUST_DOMAIN = 'wallet';

export const MESH_IDENTITIES = ['gateway', 'ledger', 'transfer', 'pse-deposit', 'collect-key', 'receipt', 'webhook', 'ops', 'reconciliation'] as const;
/**
 * `ops`: operator tools (the invariant check, the fault suite and the benchmark's checks).
 * `reconciliation`: the reconciliation with the rails, which reads the owning services' settled
 * records (ListSettlements / FindSettlements) across companies.
 */
export type MeshIdentity = (typeof MESH_IDENTITIES)[number];

export function isMeshIdentity(s: string): s is MeshIdentity {
  return (MESH_IDENTITIES as readonly string[]).includes(s);
}

export function meshUri(identity: MeshIdentity): string {
  return `spiffe://${MESH_TRUST_DOMAIN}/${identity}`;
}

/** The identity named by a certificate's SAN (a TLS peer certificate's `subjectaltname` or an X509Certificate's `subjectAltName`). */
export function identityOf(cert: { subjectaltname?: string | undefined } | { subjectAltName?: string | undefined } | undefined): MeshIdentity | undefined {
  const san = cert && ('subjectaltname' in cert ? cert.subjectaltname : 'subjectAltName' in cert ? cert.subjectAltName : undefined);
  if (!san) return undefined;
  const prefix = `URI:spiffe://${MESH_TRUST_DOMAIN}/`;
  const found = san
    .split(', ')
    .filter((e) => e.startsWith(prefix))
    .map((e) => e.slice(prefix.length));
  // One identity per certificate: a certificate naming two is not trusted for either.
  return found.length === 1 && isMeshIdentity(found[0]!) ? found[0] : undefined;
}

/**
 * A process's mesh credentials: the CA it trusts, its certificate chain and key (PEM), and the
 * keys of the signed caller context (caller-context.ts): the gateway's public key, with which every
 * server verifies the principal of a gateway call, and, in the gateway only, the private key.
 */
export interface MeshTls {
  identity: MeshIdentity;
  ca: Buffer;
  cert: Buffer;
  key: Buffer;
  callerVerifyKey?: KeyObject;
  callerSigningKey?: KeyObject;
}

/**
 * Reads a cert-manager style directory (`ca.crt`, `tls.crt`, `tls.key`, as the Secret of a
 * `Certificate` mounts) and checks, at start-up, that the certificate is this process's identity,
 * issued by that CA and valid now: a wrong mount fails loudly instead of at the first call.
 */
export function loadMeshTls(dir: string, identity: MeshIdentity, caller: { verifyKey?: KeyObject; signingKey?: KeyObject } = {}): MeshTls {
  const ca = readFileSync(join(dir, 'ca.crt'));
  const cert = readFileSync(join(dir, 'tls.crt'));
  const key = readFileSync(join(dir, 'tls.key'));
  return checkMeshTls({
    identity,
    ca,
    cert,
    key,
    ...(caller.verifyKey ? { callerVerifyKey: caller.verifyKey } : {}),
    ...(caller.signingKey ? { callerSigningKey: caller.signingKey } : {}),
  });
}

export function checkMeshTls(tls: MeshTls): MeshTls {
  const leaf = new X509Certificate(tls.cert);
  const found = identityOf(leaf);
  if (found !== tls.identity) throw new Error(`mesh certificate names ${found ?? 'no mesh identity'}, not ${tls.identity}`);
  const now = Date.now();
  if (Date.parse(leaf.validFrom) > now || Date.parse(leaf.validTo) < now)
    throw new Error(`mesh certificate of ${tls.identity} is not valid now (${leaf.validFrom} – ${leaf.validTo})`);
  if (!leaf.checkIssued(new X509Certificate(tls.ca))) throw new Error(`mesh certificate of ${tls.identity} was not issued by the configured CA`);
  return tls;
}

/** The subject of the development CA: production refuses certificates it issued. */
export const DEVELOPMENT_CA_NAME = 'Wallet development mesh CA (not for production)';

export function isDevelopmentCa(ca: Buffer): boolean {
  return new X509Certificate(ca).subject.includes(DEVELOPMENT_CA_NAME);
}
