import { devMeshTls } from './dev-pki.js';
import { loadSigningKey, loadVerifyKey } from './caller-context.js';
import { isDevelopmentCa, loadMeshTls, type MeshIdentity, type MeshTls } from './identity.js';

/**
 * The mesh credentials of this process from its environment: `MESH_TLS_DIR` (a mounted
 * cert-manager Secret: ca.crt, tls.crt, tls.key). Outside production, without it, the development
 * PKI (made on first use; `WALLET_DEV_PKI_DIR` moves it). In production it is required, and a certificate of the development CA
 * is refused.
 */
export function meshTlsFromEnv(identity: MeshIdentity, env: Record<string, string | undefined>): MeshTls {
  const production = env.NODE_ENV === 'production';
  const dir = env.MESH_TLS_DIR;
  if (!dir) {
    if (production) throw new Error('MESH_TLS_DIR is required in production (the mesh certificate of this process)');
    return devMeshTls(identity, env.WALLET_DEV_PKI_DIR);
  }
  // The signed caller context: every process verifies with the gateway's public key; the gateway signs.
  const publicFile = env.CALLER_CONTEXT_PUBLIC_KEY_FILE;
  const privateFile = env.CALLER_CONTEXT_PRIVATE_KEY_FILE;
  if (!publicFile) throw new Error("CALLER_CONTEXT_PUBLIC_KEY_FILE is required with MESH_TLS_DIR (the gateway's caller-context public key)");
  if (identity === 'gateway' && !privateFile) throw new Error('CALLER_CONTEXT_PRIVATE_KEY_FILE is required in the gateway with MESH_TLS_DIR');
  const tls = loadMeshTls(dir, identity, {
    verifyKey: loadVerifyKey(publicFile),
    ...(identity === 'gateway' && privateFile ? { signingKey: loadSigningKey(privateFile) } : {}),
  });
  if (production && isDevelopmentCa(tls.ca)) throw new Error('MESH_TLS_DIR holds a certificate of the development CA, refused in production');
  return tls;
}
