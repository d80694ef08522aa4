import { PadesReceiptSigner } from '../adapters/pades-signer.js';
import { developmentSigningP12, signingKeyFromP12 } from '../adapters/signing-key.js';
import { depositView } from '../domain/receipt-view.js';
import type { StoredDeposit } from '../domain/records.js';
import { PDFSIG_AVAILABLE, PDFSIG_MISSING, pdfsig } from '../pdfsig.testing.js';
import { PDFIMAGES_AVAILABLE, receiptQrCodes } from '../qr.testing.js';
import type { ReceiptDeps } from './deps.js';
import type { IssuedReceipt, IssuedReceipts, ReceiptSigner } from './ports.js';
import { renderReceipt, verifyUrl } from './render-receipt.js';

// What the receipt carries for verification: the QR (read back from the PDF with poppler's
// pdfimages and decoded with jsQR) points to the verification page when one is configured, and the
// returned PDF is the signed one.
if (!PDFIMAGES_AVAILABLE || !PDFSIG_AVAILABLE) process.stderr.write(`[render-receipt.spec] (pdfimages/pdfsig: poppler-utils)${PDFSIG_MISSING}`);
const withPoppler = PDFIMAGES_AVAILABLE && PDFSIG_AVAILABLE ? it : it.skip;

const AT = new Date('2026-11-19T13:05:01Z');
const deposit: StoredDeposit = {
  id: 'dep_0123456789abcdef01234567',
  companyId: 'c0a80101-0000-4000-8000-000000000002',
  status: 'ASSIGNED',
  statusAt: AT,
  lastEventAt: AT,
  lastEventId: 'e-2',
  source: 'PSE',
  amount: 25_000_000n,
  feeAmount: 100_000n,
  ivaAmount: 19_000n,
  netAmount: 24_881_000n,
  currency: 'COP',
  brebKeyId: null,
  brebKeyExternalId: null,
  brebKeyName: null,
  brebKeyValue: null,
  payerName: 'Andrés Muñoz',
  payerDocument: 'CC 80123456',
  payerEmail: 'andres@example.co',
  payerBank: 'Banco de Bogotá',
  internalRef: 'PEDIDO-981',
  providerTransferId: 'pse-5544',
  providerConfirmedAt: new Date('2026-11-19T13:05:00Z'),
  createdAt: new Date('2026-11-19T13:00:00Z'),
  expiresAt: null,
};

describe('renderReceipt', () => {
  const signer = new PadesReceiptSigner(signingKeyFromP12(developmentSigningP12('test-passphrase'), 'test-passphrase', { development: true }));
  const issues: IssuedReceipt[] = [];
  const memory: IssuedReceipts = {
    record: async (r) => void issues.push(r),
    find: async () => [],
  };
  const deps = (verifyBaseUrl: string, s: ReceiptSigner = signer, issued: IssuedReceipts = memory): ReceiptDeps => ({
    records: { transaction: async () => undefined, deposit: async () => undefined },
    issued,
    verifyBaseUrl,
    signer: s,
    now: () => AT,
  });
  const view = depositView(deposit, { name: 'Distribuidora Andina S.A.S.', nit: '900.123.456-7' });
  const owner = { companyId: deposit.companyId, subjectId: deposit.id };
  beforeEach(() => void issues.splice(0));

  it('signs what it renders, at the generation time, with the receipt number in the reason', async () => {
    const calls: Array<{ pdf: Buffer; at: Date; reason: string }> = [];
    const recording: ReceiptSigner = {
      sign: async (pdf, o) => {
        calls.push({ pdf, ...o });
        return Buffer.concat([pdf, Buffer.from('%signed\n')]);
      },
      certificate: { name: 'Recording signer', sha256: 'AB:CD' },
    };
    const r = await renderReceipt(deps('', recording), view, owner);
    expect(calls).toHaveLength(1);
    expect(calls[0]).toMatchObject({ at: AT, reason: `Comprobante de recaudo ${view.receiptNumber}` });
    expect(r.pdf.equals(Buffer.concat([calls[0]!.pdf, Buffer.from('%signed\n')]))).toBe(true);
  });

  withPoppler('with a verification page configured, the QR of the signed receipt is its URL (number and the hash prefix)', async () => {
    const base = 'https://wallet.example.co/verificar/';
    const r = await renderReceipt(deps(base), view, owner);
    const url = `https://wallet.example.co/verificar/${view.receiptNumber}?h=${r.sha256.slice(0, 16)}`;
    expect(verifyUrl(base, view.receiptNumber, r.sha256)).toBe(url);
    expect(receiptQrCodes(r.pdf)).toEqual([url]);
    expect(pdfsig(r.pdf).signatures[0]?.validation).toBe('Signature is Valid.');
  });

  withPoppler('without one, the QR carries the receipt number and the full SHA-256, to compare with X-Receipt-Sha256', async () => {
    const r = await renderReceipt(deps(''), view, owner);
    expect(receiptQrCodes(r.pdf)).toEqual([`${view.receiptNumber} SHA-256 ${r.sha256}`]);
  });

  it('records every receipt it returns: number, content hash, signer, owner and what the page may show (no party data)', async () => {
    const r = await renderReceipt(deps(''), view, owner);
    expect(issues).toEqual([
      {
        receiptNumber: view.receiptNumber,
        sha256: r.sha256,
        signerSha256: signer.certificate.sha256,
        signerName: signer.certificate.name,
        kind: 'DEPOSIT',
        subjectId: deposit.id,
        companyId: deposit.companyId,
        summary: {
          title: view.title,
          company: { name: 'Distribuidora Andina S.A.S.', nit: '900.123.456-7' },
          statusLabel: view.statusLabel,
          tone: 'ok',
          issuedFor: view.issuedFor,
          headline: view.headline,
          grandTotal: view.grandTotal,
        },
      },
    ]);
    expect(signer.certificate.sha256).toMatch(/^([0-9A-F]{2}:){31}[0-9A-F]{2}$/);
    const stored = JSON.stringify(issues[0]!.summary);
    for (const secret of [deposit.payerName!, deposit.payerDocument!, deposit.payerEmail!, deposit.internalRef!]) expect(stored).not.toContain(secret);
  });

  it('a receipt whose issue cannot be recorded is not returned (its QR would lead nowhere)', async () => {
    const failing: IssuedReceipts = {
      record: async () => {
        throw new Error('database down');
      },
      find: async () => [],
    };
    await expect(renderReceipt(deps('', signer, failing), view, owner)).rejects.toThrow('database down');
  });
});
