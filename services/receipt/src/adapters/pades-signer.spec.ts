import { createHash, createPublicKey, verify, X509Certificate } from 'node:crypto';
import forge from 'node-forge';
import { receiptHash, transactionView, type ReceiptView } from '../domain/receipt-view.js';
import type { StoredTransaction } from '../domain/records.js';
import { renderReceiptPdf } from '../domain/render-pdf.js';
import { PDFSIG_AVAILABLE, PDFSIG_MISSING, pdfsig, signedByteRange, tamperSignedPdf } from '../pdfsig.testing.js';
import { PadesReceiptSigner } from './pades-signer.js';
import { DEVELOPMENT_SIGNER_CN, developmentSigningP12, signingKeyFromP12, type SigningKey } from './signing-key.js';

// The receipts' PAdES signature, checked by poppler's pdfsig (an independent verifier) and by
// reading the CMS back: signed, it verifies; one byte changed inside the signed range, it does not.
if (!PDFSIG_AVAILABLE) process.stderr.write(`[pades-signer.spec]${PDFSIG_MISSING}`);
const withPdfsig = PDFSIG_AVAILABLE ? it : it.skip;

const AT = new Date('2026-11-20T15:04:10Z');
const tx: StoredTransaction = {
  id: '7d0f6b0e-2a8b-4a55-9a55-1c1a3f2b9e01',
  companyId: 'c0a80101-0000-4000-8000-000000000001',
  status: 'COMPLETED',
  statusAt: AT,
  lastEventAt: AT,
  lastEventId: 'e-1',
  rail: 'BREB',
  amount: 123_456_789n,
  totalFee: 150_000n,
  ivaAmount: 28_500n,
  netAmount: 123_306_789n,
  targetName: 'María Fernanda Peñaloza Ávila',
  targetDocument: 'CC 1020304050',
  reference: 'FAC-2026-0042',
  description: 'Pago de nómina noviembre',
  bankName: 'Nequi',
  bankAccountType: null,
  bankAccountMasked: null,
  brebKey: '3001234567 (PHONE)',
  providerTransferId: 'breb-77881',
  errorMessage: null,
  apiKeyId: null,
  createdAt: new Date('2026-11-20T15:04:05Z'),
  completedAt: new Date('2026-11-20T15:04:09Z'),
  kind: null,
};

let key: SigningKey;
let view: ReceiptView;
let unsigned: Buffer;
let signed: Buffer;

beforeAll(async () => {
  key = signingKeyFromP12(developmentSigningP12('test-passphrase'), 'test-passphrase', { development: true });
  view = transactionView(tx, { name: 'Distribuidora Andina de Café S.A.S.', nit: '900.123.456-7' });
  const sha256 = receiptHash(view);
  unsigned = await renderReceiptPdf({ view, sha256, verifyUrl: `https://verificar.example.co/${view.receiptNumber}`, generatedAt: AT });
  signed = await new PadesReceiptSigner(key).sign(unsigned, { at: AT, reason: `${view.title} ${view.receiptNumber}` });
});

/** The CMS in /Contents: the hex between the two signed ranges, without its zero padding. */
function cmsOf(pdf: Buffer): Buffer {
  const [, end1, start2] = signedByteRange(pdf);
  const hex = Buffer.from(pdf.subarray(end1 + 1, start2 - 1).toString('latin1'), 'hex');
  // DER length of the outer SEQUENCE (long form: 0x8n then n bytes).
  const n = hex[1]! & 0x7f;
  const len = hex[1]! < 0x80 ? hex[1]! : hex.subarray(2, 2 + n).reduce((a, b) => a * 256 + b, 0);
  return hex.subarray(0, (hex[1]! < 0x80 ? 2 : 2 + n) + len);
}

const asn = (b: Buffer) => forge.asn1.fromDer(forge.util.createBuffer(b.toString('binary')));
const der = (a: forge.asn1.Asn1) => Buffer.from(forge.asn1.toDer(a).getBytes(), 'binary');
const oidOf = (a: forge.asn1.Asn1) => forge.asn1.derToOid(a.value as string);
const kids = (a: forge.asn1.Asn1) => a.value as forge.asn1.Asn1[];

describe('PAdES signature of a receipt', () => {
  it('keeps the rendered receipt as it is and appends the signature (an incremental update)', () => {
    expect(signed.subarray(0, unsigned.length).equals(unsigned)).toBe(true);
    const [start1, len1, start2, len2] = signedByteRange(signed);
    // The whole file is signed but the /Contents hole.
    expect([start1, start2 + len2]).toEqual([0, signed.length]);
    expect(signed.subarray(len1, start2).toString('latin1')).toMatch(/^<[0-9a-f]+>$/);
    expect(signed.toString('latin1')).toContain('/SubFilter /ETSI.CAdES.detached');
    expect(signed.toString('latin1')).toContain('/M (D:20261120150410Z)');
  });

  withPdfsig('pdfsig: valid, signed by the certificate CN, ETSI.CAdES.detached, SHA-256, the whole document', () => {
    const r = pdfsig(signed);
    expect(r.signatures).toHaveLength(1);
    const [s] = r.signatures;
    expect(s).toMatchObject({
      validation: 'Signature is Valid.',
      commonName: DEVELOPMENT_SIGNER_CN,
      type: 'ETSI.CAdES.detached',
      hashAlgorithm: 'SHA-256',
      totalDocumentSigned: true,
      signingTime: 'Nov 20 2026 15:04:10',
    });
    // Self-signed: pdfsig cannot chain it to a trusted root (integrity is what is asserted above).
    expect(s!.certificateValidation).not.toBe('Certificate is Trusted.');
    expect(r.output).not.toMatch(/Syntax Error/);
  });

  withPdfsig('pdfsig: one byte changed inside the signed range (not in /Contents) → Digest Mismatch', () => {
    const tampered = tamperSignedPdf(signed);
    const [, end1] = signedByteRange(signed);
    const changed = [...tampered.keys()].filter((i) => tampered[i] !== signed[i]);
    expect(changed).toHaveLength(1);
    expect(changed[0]).toBeLessThan(end1);
    const [s] = pdfsig(tampered).signatures;
    expect(s?.validation).toBe('Digest Mismatch.');
    // And an unsigned render carries no signature at all.
    expect(pdfsig(unsigned).signatures).toEqual([]);
  });

  it('the CMS is PAdES baseline B-B: content-type, message-digest of the signed ranges and signing-certificate-v2, no signing-time; it verifies with the certificate it carries', () => {
    const cms = cmsOf(signed);
    const contentInfo = asn(cms);
    expect(oidOf(kids(contentInfo)[0]!)).toBe('1.2.840.113549.1.7.2');
    const signedData = kids(kids(contentInfo)[1]!)[0]!;
    const [, , encap, certs, signerInfos] = kids(signedData);
    expect(kids(encap!)).toHaveLength(1); // detached: eContentType only
    const certificates = kids(certs!).map(der);
    expect(certificates).toEqual(key.certificates);
    const signerInfo = kids(signerInfos!)[0]!;
    const fields = kids(signerInfo);
    const signedAttrs = fields[3]!;
    const attrs = new Map(kids(signedAttrs).map((a) => [oidOf(kids(a)[0]!), kids(kids(a)[1]!)[0]!]));
    expect([...attrs.keys()].sort()).toEqual(['1.2.840.113549.1.9.16.2.47', '1.2.840.113549.1.9.3', '1.2.840.113549.1.9.4'].sort());
    expect(attrs.has('1.2.840.113549.1.9.5')).toBe(false); // signing-time: the time is /M

    const [start1, len1, start2, len2] = signedByteRange(signed);
    const ranges = Buffer.concat([signed.subarray(start1, start1 + len1), signed.subarray(start2, start2 + len2)]);
    const digest = createHash('sha256').update(ranges).digest();
    expect(Buffer.from(attrs.get('1.2.840.113549.1.9.4')!.value as string, 'binary')).toEqual(digest);
    // signing-certificate-v2: certs[0].certHash = SHA-256 of the signer's certificate.
    const essCertId = kids(kids(attrs.get('1.2.840.113549.1.9.16.2.47')!)[0]!)[0]!;
    expect(Buffer.from(kids(essCertId)[0]!.value as string, 'binary')).toEqual(createHash('sha256').update(key.certificates[0]!).digest());

    // The signature is over the attributes' DER with the SET tag (they are stored [0] IMPLICIT).
    const attrsDer = der(signedAttrs);
    attrsDer[0] = 0x31;
    const signature = Buffer.from(fields[5]!.value as string, 'binary');
    const signerKey = createPublicKey(new X509Certificate(certificates[0]!).publicKey.export({ type: 'spki', format: 'pem' }));
    expect(verify('sha256', attrsDer, signerKey, signature)).toBe(true);
    attrsDer[attrsDer.length - 1] = attrsDer[attrsDer.length - 1]! ^ 1;
    expect(verify('sha256', attrsDer, signerKey, signature)).toBe(false);
  });

  it('signs many receipts with one signer (the key is opened once)', async () => {
    const signer = new PadesReceiptSigner(key);
    const a = await signer.sign(unsigned, { at: AT, reason: 'a' });
    const b = await signer.sign(unsigned, { at: AT, reason: 'a' });
    // Same input, same time: RSA PKCS#1 v1.5 is deterministic, so the same bytes.
    expect(a.equals(b)).toBe(true);
    const c = await signer.sign(unsigned, { at: new Date(AT.getTime() + 1000), reason: 'a' });
    expect(c.equals(a)).toBe(false);
  });
});
