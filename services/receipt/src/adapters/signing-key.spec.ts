import { spawnSync } from 'node:child_process';
import { mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { PDFSIG_AVAILABLE, pdfsig } from '../pdfsig.testing.js';
import { PadesReceiptSigner } from './pades-signer.js';
import { DEVELOPMENT_SIGNER_CN, developmentSigningP12, SigningKeyError, signingKeyFromP12 } from './signing-key.js';

// Opening the operator's PKCS#12: the development one, and (with openssl) PKCS#12 files as a CA
// issues them (RSA and EC P-256 leaves with their CA, OpenSSL 3's defaults: PBES2/AES-256, SHA-256 MAC).
const OPENSSL = spawnSync('openssl', ['version'], { encoding: 'utf8' }).status === 0;
if (!OPENSSL) process.stderr.write('\n[signing-key.spec] ***** openssl NOT FOUND: the CA-issued PKCS#12 cases are SKIPPED. *****\n\n');
const withOpenssl = OPENSSL ? it : it.skip;
const PASS = 'correct-horse-battery';

let dir: string;
beforeAll(() => {
  dir = mkdtempSync(join(tmpdir(), 'receipt-p12-'));
});
afterAll(() => rmSync(dir, { recursive: true, force: true }));

function openssl(args: string[]): void {
  const r = spawnSync('openssl', args, { cwd: dir, encoding: 'utf8' });
  if (r.status !== 0) throw new Error(`openssl ${args.join(' ')}: ${r.stderr}`);
}

/** A CA, and a leaf of `kind` it issued, exported with the CA as a PKCS#12 (what a certificate provider hands over). */
function caIssuedP12(kind: 'rsa' | 'ec', cn: string): Buffer {
  openssl(['req', '-x509', '-newkey', 'rsa:2048', '-nodes', '-keyout', 'ca.key', '-out', 'ca.crt', '-subj', '/CN=Test Receipts CA/O=Test', '-days', '30']);
  writeFileSync(join(dir, 'leaf.ext'), 'basicConstraints=critical,CA:FALSE\nkeyUsage=critical,digitalSignature,nonRepudiation\n');
  const newkey = kind === 'rsa' ? ['-newkey', 'rsa:2048'] : ['-newkey', 'ec', '-pkeyopt', 'ec_paramgen_curve:P-256'];
  openssl(['req', ...newkey, '-nodes', '-keyout', `${kind}.key`, '-out', `${kind}.csr`, '-subj', `/CN=${cn}/O=Billetera/C=CO`]);
  openssl([
    'x509',
    '-req',
    '-in',
    `${kind}.csr`,
    '-CA',
    'ca.crt',
    '-CAkey',
    'ca.key',
    '-CAcreateserial',
    '-out',
    `${kind}.crt`,
    '-days',
    '30',
    '-extfile',
    'leaf.ext',
  ]);
  openssl(['pkcs12', '-export', '-inkey', `${kind}.key`, '-in', `${kind}.crt`, '-certfile', 'ca.crt', '-out', `${kind}.p12`, '-passout', `pass:${PASS}`]);
  return readFileSync(join(dir, `${kind}.p12`));
}

const errorOf = (f: () => unknown): Error => {
  try {
    f();
  } catch (err) {
    return err as Error;
  }
  throw new Error('no error');
};

describe('the receipt signing key', () => {
  it('the development PKCS#12: a self-signed RSA certificate, CN "Wallet receipts (development)", valid now', () => {
    const key = signingKeyFromP12(developmentSigningP12(PASS), PASS, { development: true });
    expect(key).toMatchObject({ keyType: 'rsa', commonName: DEVELOPMENT_SIGNER_CN, development: true });
    expect(key.certificates).toHaveLength(1);
    expect(key.signer.subject).toBe(key.signer.issuer);
    expect(key.signer.checkPrivateKey(key.privateKey)).toBe(true);
  });

  it('refuses a wrong passphrase, bytes that are no PKCS#12, and a certificate not valid now; never shows the passphrase', () => {
    const p12 = developmentSigningP12(PASS);
    const wrong = errorOf(() => signingKeyFromP12(p12, 'not-the-passphrase'));
    expect(wrong).toBeInstanceOf(SigningKeyError);
    expect(wrong.message).toMatch(/not a PKCS#12 that this passphrase opens/);
    expect(wrong.message).not.toContain('not-the-passphrase');
    expect(wrong.message).not.toContain(PASS);
    expect(errorOf(() => signingKeyFromP12(Buffer.from('%PDF-1.7 not a p12'), PASS))).toBeInstanceOf(SigningKeyError);
    const expired = errorOf(() => signingKeyFromP12(p12, PASS, { now: new Date(Date.now() + 400 * 86_400_000) }));
    expect(expired).toBeInstanceOf(SigningKeyError);
    expect(expired.message).toMatch(/^the signing certificate is valid from .* to .*, not now/);
  });

  withOpenssl("a CA-issued RSA PKCS#12 (OpenSSL 3's defaults): the leaf signs, the CA travels in the CMS", async () => {
    const key = signingKeyFromP12(caIssuedP12('rsa', 'Comprobantes Billetera SAS'), PASS);
    expect(key).toMatchObject({ keyType: 'rsa', commonName: 'Comprobantes Billetera SAS', development: false });
    expect(key.certificates).toHaveLength(2);
    expect(key.signer.subject).toContain('CN=Comprobantes Billetera SAS');
    if (!PDFSIG_AVAILABLE) return;
    const signed = await new PadesReceiptSigner(key).sign(minimalPdf(), { at: new Date(), reason: 'test' });
    const [s] = pdfsig(signed).signatures;
    expect(s).toMatchObject({ validation: 'Signature is Valid.', commonName: 'Comprobantes Billetera SAS', type: 'ETSI.CAdES.detached' });
    // The chain is in the CMS: pdfsig finds the issuer, which is simply not trusted here.
    expect(s!.certificateValidation).toBe("Certificate issuer isn't Trusted.");
  });

  withOpenssl('a CA-issued EC P-256 PKCS#12: ECDSA signatures', async () => {
    const key = signingKeyFromP12(caIssuedP12('ec', 'Comprobantes EC'), PASS);
    expect(key).toMatchObject({ keyType: 'ec', commonName: 'Comprobantes EC' });
    if (!PDFSIG_AVAILABLE) return;
    const [s] = pdfsig(await new PadesReceiptSigner(key).sign(minimalPdf(), { at: new Date(), reason: 'test' })).signatures;
    expect(s).toMatchObject({ validation: 'Signature is Valid.', commonName: 'Comprobantes EC' });
  });
});

/** A one-page PDF with a classic cross-reference table, as pdfkit writes them. */
function minimalPdf(): Buffer {
  const objects = [
    '<< /Type /Catalog /Pages 2 0 R >>',
    '<< /Type /Pages /Kids [3 0 R] /Count 1 >>',
    '<< /Type /Page /Parent 2 0 R /MediaBox [0 0 200 200] /Contents 4 0 R >>',
    '<< /Length 8 >>\nstream\n0 0 m S\n\nendstream',
  ];
  let body = '%PDF-1.7\n';
  const offsets: number[] = [];
  objects.forEach((o, i) => {
    offsets.push(body.length);
    body += `${i + 1} 0 obj\n${o}\nendobj\n`;
  });
  const xref = body.length;
  body += `xref\n0 ${objects.length + 1}\n0000000000 65535 f \n${offsets.map((o) => `${String(o).padStart(10, '0')} 00000 n \n`).join('')}`;
  body += `trailer\n<< /Size ${objects.length + 1} /Root 1 0 R >>\nstartxref\n${xref}\n%%EOF\n`;
  return Buffer.from(body, 'latin1');
}
