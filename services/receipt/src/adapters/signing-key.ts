import { createPrivateKey, generateKeyPairSync, randomBytes, sign, X509Certificate, type KeyObject } from 'node:crypto';
import forge from 'node-forge';

/**
 * The key and certificate receipts are signed with (PAdES), read once at start from a PKCS#12
 * (`RECEIPT_SIGNING_P12_FILE` + `RECEIPT_SIGNING_P12_PASSPHRASE`) or, outside production when none
 * is configured, made at start (`developmentSigningP12`). node-forge opens the PKCS#12 (Node has
 * no PKCS#12 reader); the key is then a native KeyObject, so each signature costs a native RSA or
 * ECDSA operation, not a pure-JS one.
 */
export interface SigningKey {
  privateKey: KeyObject;
  /** 'rsa' or 'ec': what the CMS names as signature algorithm. */
  keyType: 'rsa' | 'ec';
  /** The signer's certificate first (DER), then the other certificates of the PKCS#12 (its chain). */
  certificates: Buffer[];
  /** The signer's certificate, parsed. */
  signer: X509Certificate;
  /** The signer's subject common name (the signature's /Name, the logs). */
  commonName: string;
  /** True for the key made at start outside production. */
  development: boolean;
}

/** A PKCS#12 that cannot be used: the message names the problem, never the passphrase or key material. */
export class SigningKeyError extends Error {
  override name = 'SigningKeyError';
}

/** The subject of the development certificate; verifiers show it as the signer (issuer unknown: it is self-signed). */
export const DEVELOPMENT_SIGNER_CN = 'Wallet receipts (development)';

const toDer = (a: forge.asn1.Asn1) => Buffer.from(forge.asn1.toDer(a).getBytes(), 'binary');

/** Opens a PKCS#12 (DER): its private key, the certificate that matches it, and the rest of its certificates. */
export function signingKeyFromP12(p12: Buffer, passphrase: string, o: { now?: Date; development?: boolean } = {}): SigningKey {
  let pfx: forge.pkcs12.Pkcs12Pfx;
  try {
    pfx = forge.pkcs12.pkcs12FromAsn1(forge.asn1.fromDer(forge.util.createBuffer(p12.toString('binary'))), false, passphrase);
  } catch (err) {
    // forge's messages ("Invalid password?", "Too few bytes to parse DER.") carry no secret.
    throw new SigningKeyError(`not a PKCS#12 that this passphrase opens (${(err as Error).message})`);
  }
  const bagsOf = (type: string) => pfx.getBags({ bagType: type })[type] ?? [];
  const keys = [...bagsOf(forge.pki.oids.pkcs8ShroudedKeyBag!), ...bagsOf(forge.pki.oids.keyBag!)].map((bag) => {
    // forge decodes RSA keys only; any other key comes as its PrivateKeyInfo, which Node reads.
    if (bag.key) return createPrivateKey(forge.pki.privateKeyToPem(bag.key));
    if (bag.asn1) return createPrivateKey({ key: toDer(bag.asn1), format: 'der', type: 'pkcs8' });
    throw new SigningKeyError('a key bag of the PKCS#12 holds no key');
  });
  if (keys.length !== 1) throw new SigningKeyError(`the PKCS#12 must hold exactly one private key (it holds ${keys.length})`);
  const privateKey = keys[0]!;
  const keyType = privateKey.asymmetricKeyType;
  if (keyType !== 'rsa' && keyType !== 'ec') throw new SigningKeyError(`an ${keyType ?? 'unknown'} key cannot sign receipts (RSA or EC only)`);

  const certificates = bagsOf(forge.pki.oids.certBag!).map((bag) => {
    // forge keeps the parsed TBSCertificate, so the re-encoding is the certificate's own DER (checked
    // below for the chain: a certificate whose bytes changed would no longer verify).
    const der = bag.cert ? toDer(forge.pki.certificateToAsn1(bag.cert)) : bag.asn1 ? toDer(bag.asn1) : undefined;
    if (!der) throw new SigningKeyError('a certificate bag of the PKCS#12 holds no certificate');
    return { der, x509: new X509Certificate(der) };
  });
  const signerIndex = certificates.findIndex((c) => c.x509.checkPrivateKey(privateKey));
  if (signerIndex < 0) throw new SigningKeyError('no certificate of the PKCS#12 matches its private key');
  const signer = certificates[signerIndex]!;
  const chain = [signer, ...certificates.filter((_, i) => i !== signerIndex)];
  for (const [i, c] of chain.entries()) {
    // Its issuer in the PKCS#12 (itself for a self-signed one), whose key must verify it.
    const issuer = chain.find((p) => c.x509.checkIssued(p.x509));
    if (issuer && !c.x509.verify(issuer.x509.publicKey))
      throw new SigningKeyError(`certificate ${i + 1} of the PKCS#12 does not verify against its issuer's key`);
  }
  const now = o.now ?? new Date();
  const from = new Date(signer.x509.validFrom);
  const to = new Date(signer.x509.validTo);
  if (now < from || now > to) {
    throw new SigningKeyError(`the signing certificate is valid from ${from.toISOString()} to ${to.toISOString()}, not now (${now.toISOString()})`);
  }
  return {
    privateKey,
    keyType,
    certificates: chain.map((c) => c.der),
    signer: signer.x509,
    commonName: /(?:^|\n)CN=([^\n]*)/.exec(signer.x509.subject)?.[1] ?? signer.x509.subject,
    development: o.development ?? false,
  };
}

/**
 * A self-signed RSA certificate and its key as a PKCS#12 under `passphrase`, made in this process
 * (Node's native key generator; forge builds the certificate and the PKCS#12). What the receipt
 * service signs with outside production when no key is configured: verifiers check the signature's
 * integrity, and show the signer as unknown.
 */
export function developmentSigningP12(passphrase: string, now = new Date()): Buffer {
  const { publicKey, privateKey } = generateKeyPairSync('rsa', {
    modulusLength: 2048,
    publicKeyEncoding: { type: 'spki', format: 'pem' },
    privateKeyEncoding: { type: 'pkcs8', format: 'pem' },
  });
  const key = forge.pki.privateKeyFromPem(privateKey) as forge.pki.rsa.PrivateKey;
  const cert = forge.pki.createCertificate();
  cert.publicKey = forge.pki.publicKeyFromPem(publicKey);
  cert.serialNumber = `01${randomBytes(15).toString('hex')}`;
  cert.validity.notBefore = new Date(now.getTime() - 60 * 60_000);
  cert.validity.notAfter = new Date(now.getTime() + 365 * 86_400_000);
  const subject = [
    { name: 'commonName', value: DEVELOPMENT_SIGNER_CN },
    { name: 'organizationName', value: 'Wallet development' },
    { name: 'countryName', value: 'CO' },
  ];
  cert.setSubject(subject);
  cert.setIssuer(subject);
  cert.setExtensions([
    { name: 'basicConstraints', cA: false, critical: true },
    { name: 'keyUsage', digitalSignature: true, nonRepudiation: true, critical: true },
    { name: 'subjectKeyIdentifier' },
  ]);
  // Signed natively: forge's own RSA signature is pure JavaScript (about 1.5 s of CPU at every
  // start); forge lays out the TBSCertificate, Node signs its DER, forge writes the certificate.
  cert.siginfo.algorithmOid = cert.signatureOid = forge.pki.oids.sha256WithRSAEncryption!;
  cert.md = forge.md.sha256.create();
  // (`getTBSCertificate` is forge's, missing from its type declarations)
  cert.tbsCertificate = (forge.pki as unknown as { getTBSCertificate(c: forge.pki.Certificate): forge.asn1.Asn1 }).getTBSCertificate(cert);
  cert.signature = sign('sha256', toDer(cert.tbsCertificate), privateKey).toString('binary');
  const pfx = forge.pkcs12.toPkcs12Asn1(key, [cert], passphrase, { algorithm: 'aes256', friendlyName: DEVELOPMENT_SIGNER_CN });
  return toDer(pfx);
}
