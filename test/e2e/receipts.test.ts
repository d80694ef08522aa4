import { eventually } from '@wallet/platform/testing';
import { pdfText } from '../support/pdf.js';
import { startStack } from '../support/stack.js';
import { fetchDocumented } from '../support/openapi-check.js';

type Stack = Awaited<ReturnType<typeof startStack>>;

/** PDF receipts through the gateway, built by the receipt service from transfer.* and deposit.* events only. */
describe('receipts end to end', () => {
  let stack: Stack;
  let co: Awaited<ReturnType<Stack['provision']>>;
  const get = (path: string, key = co.readKey) => fetchDocumented(`${stack.gateway.url}${path}`, { headers: { authorization: `Bearer ${key}` } });

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
    const send = await stack.http('POST', '/transfers/send', {
      token: co.writeKey,
      body: {
        amount: 123_456_713,
        description: 'Pago nómina',
        destination: {
          bankAccount: {
            bankId: 1,
            accountTypeId: 20,
            accountNumber: '0012345678',
            documentTypeId: 1,
            documentNumber: '1020304050',
            holderFirstName: 'José',
            holderLastName: 'Muñoz',
          },
        },
      },
    });
    expect(send.status).toBe(201);
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
});
