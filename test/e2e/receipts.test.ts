import { eventually } from '@wallet/platform/testing';
import { PDFIMAGES_AVAILABLE, PDFSIG_AVAILABLE, PDFSIG_MISSING, pdfsig, receiptQrCodes, signedByteRange, tamperSignedPdf } from '@wallet/receipt/testing';
import { pdfText } from '../support/pdf.js';
import { startStack } from '../support/stack.js';
import { fetchDocumented } from '../support/openapi-check.js';

type Stack = Awaited<ReturnType<typeof startStack>>;

if (!PDFSIG_AVAILABLE) process.stderr.write(`[receipts.test]${PDFSIG_MISSING}`);
const withPdfsig = PDFSIG_AVAILABLE ? it : it.skip;
const withPdfimages = PDFIMAGES_AVAILABLE ? it : it.skip;

/** PDF receipts through the gateway, built by the receipt service from transfer.* and deposit.* events only. */
describe('receipts end to end', () => {
  let stack: Stack;
  let co: Awaited<ReturnType<Stack['provision']>>;
  const get = (path: string, key = co.readKey) => fetchDocumented(`${stack.gateway.url}${path}`, { headers: { authorization: `Bearer ${key}` } });

  /** An ACH send to a savings account at bank 1 (the sandbox's rail fails an amount ending in 13), accepted (201). */
  async function sendAch(
    amount: number,
    description: string,
    holder: { accountNumber: string; documentNumber: string; holderFirstName: string; holderLastName: string },
  ) {
    const send = await stack.http('POST', '/transfers/send', {
      token: co.writeKey,
      body: { amount, description, destination: { bankAccount: { bankId: 1, accountTypeId: 20, documentTypeId: 1, ...holder } } },
    });
    expect(send.status).toBe(201);
    return send;
  }

  beforeAll(async () => {
    stack = await startStack({ transfers: true, deposits: true, receipts: true });
    co = await stack.provision('Recibos Ñandú S.A.S.', { taxRegime: 'COMMON', nit: '900765432-1' });
    await stack.admin('PATCH', `/admin/companies/${co.id}`, { rateLimitMultiplier: 1000 });
    await stack.admin('PUT', '/admin/fees/ACH_OUTFLOW', { fixedFeeCents: 300_000, variableBps: 0, companyId: co.id });
    await stack.admin('POST', `/admin/companies/${co.id}/wallets/ACH/credit`, { amountCents: 500_000_000, reference: 'r1' });
  }, 90_000);
  afterAll(async () => {
    await stack?.stop();
  });

  it('a failed ACH send has a receipt with formatted amounts, the masked account and the status', async () => {
    const send = await sendAch(123_456_713, 'Pago nómina', {
      accountNumber: '0012345678',
      documentNumber: '1020304050',
      holderFirstName: 'José',
      holderLastName: 'Muñoz',
    });
    const id = send.body.id as string;
    await eventually(async () => (await stack.http('GET', `/wallets/transactions/${id}`, { token: co.readKey })).body.status === 'FAILED', 15_000, 150);
    const res = await eventually(
      async () => {
        const r = await get(`/wallets/transactions/${id}/receipt.pdf`);
        if (r.status !== 200) return undefined;
        const buf = await r.arrayBuffer();
        const t = await pdfText(buf);
        return /Fallid/i.test(t.text) ? { r, t } : undefined;
      },
      15_000,
      200,
    );
    expect(res.r.headers.get('content-type')).toBe('application/pdf');
    expect(res.r.headers.get('content-disposition')).toMatch(/^inline; filename="comprobante-TRX-[A-Z0-9]+\.pdf"$/);
    expect(res.t.pages).toBe(1);
    expect(res.t.text).toContain('$ 1.234.567,13');
    expect(res.t.text).toContain('$ 3.000,00');
    expect(res.t.text).toContain('****5678');
    expect(res.t.text).not.toContain('0012345678');
    expect(res.t.text).toContain('Recibos Ñandú S.A.S.');
    expect(res.t.text).toContain(res.r.headers.get('x-receipt-sha256')!);
  });

  withPdfsig('a receipt downloaded over HTTP is signed (PAdES): pdfsig verifies it; one byte changed and it fails', async () => {
    const send = await sendAch(2_500_000, 'Firma', {
      accountNumber: '0099887766',
      documentNumber: '1020304051',
      holderFirstName: 'Ana',
      holderLastName: 'Peña',
    });
    const pdf = await eventually(
      async () => {
        const r = await get(`/wallets/transactions/${send.body.id as string}/receipt.pdf`);
        return r.status === 200 ? Buffer.from(await r.arrayBuffer()) : undefined;
      },
      15_000,
      200,
    );
    // The e2e stack configures no key: the receipt service made its development key at start.
    const [s] = pdfsig(pdf).signatures;
    expect(s).toMatchObject({
      validation: 'Signature is Valid.',
      commonName: 'Wallet receipts (development)',
      type: 'ETSI.CAdES.detached',
      hashAlgorithm: 'SHA-256',
      totalDocumentSigned: true,
    });
    const tampered = tamperSignedPdf(pdf);
    expect(tampered.findIndex((b, i) => b !== pdf[i])).toBeLessThan(signedByteRange(pdf)[1]);
    expect(pdfsig(tampered).signatures[0]?.validation).toBe('Digest Mismatch.');
  });

  it('a paid PSE deposit has a receipt; unknown and foreign ids read as not found', async () => {
    const dep = await stack.http('POST', '/deposits/pse', {
      token: co.writeKey,
      body: {
        amountCents: 5_000_000,
        payerDocumentTypeId: 1,
        payerDocumentNumber: '52123456',
        payerFirstName: 'Marta',
        payerLastName: 'Ríos',
        payerEmail: 'marta@example.com',
      },
    });
    await fetch(`${stack.sandbox!.url}/sandbox/pse/${dep.body.id}/pay`, {
      method: 'POST',
      headers: { 'content-type': 'application/json' },
      body: JSON.stringify({ outcome: 'APPROVED', payerBank: 'Bancolombia' }),
    });
    const t = await eventually(
      async () => {
        const r = await get(`/wallets/deposits/${dep.body.id}/receipt.pdf`);
        if (r.status !== 200) return undefined;
        const x = await pdfText(await r.arrayBuffer());
        return /Pagad/i.test(x.text) ? x : undefined;
      },
      15_000,
      200,
    );
    expect(t.pages).toBe(1);
    expect(t.text).toContain('$ 50.000,00');
    expect(t.text).toContain('Marta');
    const other = await stack.provision('Otra S.A.S.');
    for (const [path, code] of [
      [`/wallets/deposits/${dep.body.id}/receipt.pdf`, 'DEPOSIT_NOT_FOUND'],
      ['/wallets/deposits/dep_unknown0000/receipt.pdf', 'DEPOSIT_NOT_FOUND'],
      ['/wallets/transactions/00000000-0000-4000-8000-000000000000/receipt.pdf', 'TRANSACTION_NOT_FOUND'],
      ['/wallets/transactions/nope/receipt.pdf', 'TRANSACTION_NOT_FOUND'],
    ] as const) {
      const r = await get(path, other.readKey);
      expect({ path, status: r.status, error: ((await r.json()) as { error: string }).error }).toEqual({ path, status: 404, error: code });
    }
  });

  withPdfimages("the receipt's QR opens the public verification page: no credential, what the receipt said, nothing of the parties", async () => {
    // ends in 13: the sandbox's rail fails it (a final status, so the receipt's content is settled)
    const send = await sendAch(7_654_313, 'Verificable', {
      accountNumber: '0055443322',
      documentNumber: '1020304052',
      holderFirstName: 'Lucía',
      holderLastName: 'Zárate',
    });
    const id = send.body.id as string;
    await eventually(async () => (await stack.http('GET', `/wallets/transactions/${id}`, { token: co.readKey })).body.status === 'FAILED', 15_000, 150);
    const { pdf, sha256, number } = await eventually(
      async () => {
        const r = await get(`/wallets/transactions/${id}/receipt.pdf`);
        if (r.status !== 200) return undefined;
        const bytes = await r.arrayBuffer();
        const buf = Buffer.from(new Uint8Array(bytes)); // a copy: the reader may take the bytes over
        return /Fallid/i.test((await pdfText(bytes)).text)
          ? { pdf: buf, sha256: r.headers.get('x-receipt-sha256')!, number: r.headers.get('x-receipt-number')! }
          : undefined;
      },
      15_000,
      200,
    );
    // the URL in the QR, decoded from the PDF's image by an independent reader
    const [qr] = receiptQrCodes(pdf);
    expect(qr).toBe(`${stack.gateway.url}/receipts/verify/${number}?h=${sha256.slice(0, 16)}`);

    // a person scanning it: an HTML page, no credential
    const page = await fetchDocumented(qr!, { headers: { accept: 'text/html,application/xhtml+xml' } });
    expect(page.status).toBe(200);
    expect(page.headers.get('content-type')).toBe('text/html; charset=utf-8');
    expect(page.headers.get('content-security-policy')).toMatch(/^default-src 'none'; style-src 'sha256-[A-Za-z0-9+/=]+'; frame-ancestors 'none'/);
    expect(page.headers.get('cache-control')).toBe('no-store');
    const html = await page.text();
    for (const shown of [
      'Comprobante auténtico',
      number,
      'Recibos Ñandú S.A.S.',
      '900765432-1',
      'Fallida',
      '$ 76.543,13',
      sha256,
      'Wallet receipts (development)',
    ])
      expect(html).toContain(shown);
    for (const party of ['0055443322', '5443322', 'Lucía', 'Zárate', '1020304052']) expect(html).not.toContain(party);
    expect(html).not.toMatch(/<script/i);

    // a program: the same answer as JSON, as the OpenAPI document states it
    const json = await fetchDocumented(qr!, { headers: { accept: 'application/json' } });
    expect(json.status).toBe(200);
    expect(await json.json()).toEqual({
      receiptNumber: number,
      sha256,
      issuedAt: expect.any(String),
      issued: {
        title: 'Comprobante de transferencia',
        company: { name: 'Recibos Ñandú S.A.S.', nit: '900765432-1' },
        statusLabel: 'Fallida',
        tone: 'failed',
        dateLabel: expect.stringMatching(/ de 20\d\d, /),
        headline: { label: 'Valor no transferido', value: '$ 76.543,13' },
        total: { label: expect.any(String), value: expect.stringMatching(/^\$ /) },
      },
      current: { statusLabel: 'Fallida', tone: 'failed', sameContent: true },
      signers: [{ name: 'Wallet receipts (development)', certificateSha256: expect.stringMatching(/^([0-9A-F]{2}:){31}[0-9A-F]{2}$/) }],
    });

    // one digit of the hash changed: not verified, the same answer as a number never issued
    const wrong = `${stack.gateway.url}/receipts/verify/${number}?h=${sha256.slice(0, 15)}${sha256[15] === '0' ? '1' : '0'}`;
    const notFound = await fetchDocumented(wrong, { headers: { accept: 'application/json' } });
    expect(notFound.status).toBe(404);
    const body = await notFound.json();
    expect(body).toEqual({ error: 'RECEIPT_NOT_FOUND', message: expect.stringMatching(/^No encontramos un comprobante/) });
    const never = await fetchDocumented(`${stack.gateway.url}/receipts/verify/TRX-0000000000?h=${sha256.slice(0, 16)}`, {
      headers: { accept: 'application/json' },
    });
    expect([never.status, await never.json()]).toEqual([404, body]);
    const notFoundPage = await fetchDocumented(wrong, { headers: { accept: 'text/html' } });
    expect(notFoundPage.status).toBe(404);
    expect(await notFoundPage.text()).toContain('No pudimos verificar este comprobante');

    // malformed: the document's formats, enforced
    for (const path of [`/receipts/verify/${number}`, `/receipts/verify/${number}?h=xyz`, `/receipts/verify/NOPE-123?h=${sha256.slice(0, 16)}`]) {
      const r = await fetchDocumented(`${stack.gateway.url}${path}`, { headers: { accept: 'application/json' } });
      expect({ path, status: r.status, error: ((await r.json()) as { error: string }).error }).toEqual({ path, status: 400, error: 'INVALID_REQUEST' });
    }

    // no credential, so limited per client IP (RATE_LIMIT_RECEIPT_VERIFICATION, 30 a minute): guessing is slow on top of impossible
    let answered = 0;
    let limited: Response | undefined;
    while (!limited && answered < 40) {
      const r = await fetch(wrong, { headers: { accept: 'application/json' } });
      if (r.status === 429) limited = r;
      else answered += 1;
    }
    expect(answered).toBeLessThan(30);
    expect(limited!.headers.get('retry-after')).toMatch(/^\d+$/);
    expect(((await limited!.json()) as { error: string }).error).toBe('RATE_LIMIT_EXCEEDED');
  });
});
