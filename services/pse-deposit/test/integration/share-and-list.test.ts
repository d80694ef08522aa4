import { eventually } from '@wallet/platform/testing';
import { depositV1 } from '@wallet/proto';
import { startDeposit } from '../../src/testing.js';
import { NATS_URL, failure, payer, startHarness, type Harness } from './harness.js';
import { depositAccess } from '../../src/grpc/deposit.handlers.js';
import { policyClient } from '@wallet/platform/testing';

interface Email {
  messageId: string;
  to: string;
  from: string;
  subject: string;
  text: string;
  html: string;
}

describe('share by e-mail, listing, isolation, switches', () => {
  let h: Harness;
  beforeAll(async () => {
    h = await startHarness();
  });
  afterAll(async () => {
    await h?.stop();
  });
  afterEach(async () => {
    await h.expectInvariants();
  });

  const inbox = async (to: string) => (await h.sandboxGet(`/sandbox/emails?to=${encodeURIComponent(to)}`)).body.items as Email[];

  it("e-mails the pay link with the standard template and the custom message escaped; the company name is the signed profile's", async () => {
    const co = await h.newCompany();
    const d = await h.client.createPseDeposit(payer({ amountCents: 123_456_789n }), h.ctx(co));
    const to = `pagador-${Date.now()}@example.com`;
    // The name in the e-mail is the one the gateway signed into the caller context (no request field carries it).
    const r = await h.client.shareByEmail(
      {
        depositId: d.id,
        recipientEmail: to,
        recipientName: 'Luis\r\nBcc: evil@example.com',
        customMessage: '<b>hola</b> & gracias',
      },
      h.ctx(co, { name: 'Distribuidora Firmada S.A.S.' }),
    );
    expect(r.success).toBe(true);
    expect(r.messageId).toBeTruthy();
    const items = await eventually(async () => {
      const l = await inbox(to);
      return l.length > 0 ? l : undefined;
    });
    expect(items).toHaveLength(1);
    const m = items[0]!;
    expect(m.subject).toBe('Solicitud de pago de Distribuidora Firmada S.A.S.');
    expect(m.text).not.toContain('Acme');
    expect(m.from).toContain('no-reply@pagos.example.co');
    expect(m.text).toContain(d.paygatewayUrl!);
    expect(m.html).toContain(d.paygatewayUrl!);
    expect(m.text).toContain('$ 1.234.567,89');
    expect(m.html).toContain('&lt;b&gt;hola&lt;/b&gt; &amp; gracias');
    expect(m.html).not.toContain('<b>hola</b>');
    expect(m.text).toContain('<b>hola</b> & gracias');
    expect(await inbox('evil@example.com')).toHaveLength(0);
  });

  it('refuses foreign/unknown ids, bad input, and deposits no longer pending', async () => {
    const co = await h.newCompany();
    const other = await h.newCompany();
    const d = await h.client.createPseDeposit(payer(), h.ctx(co));
    const share = (c: string, over: Partial<depositV1.ShareByEmailRequest> = {}) =>
      h.client.shareByEmail({ depositId: d.id, recipientEmail: 'x@example.com', ...over }, h.ctx(c));
    expect((await failure(share(other))).code).toBe('DEPOSIT_NOT_FOUND');
    expect((await failure(share(co, { depositId: 'dep_aaaaaaaaaaaaaaaaaaaaaaaa' }))).code).toBe('DEPOSIT_NOT_FOUND');
    expect((await failure(share(co, { depositId: 'nope' }))).code).toBe('DEPOSIT_NOT_FOUND');
    const bad = await failure(share(co, { recipientEmail: 'x\r\n@y', recipientName: 'n'.repeat(101), customMessage: 'm'.repeat(501) }));
    expect(bad.code).toBe('INVALID_REQUEST');
    expect((bad.details!.fields as Array<{ path: string }>).map((f) => f.path).sort()).toEqual(['customMessage', 'recipientEmail', 'recipientName']);
    await h.sandboxPost(`/sandbox/pse/${d.id}/pay`, { outcome: 'APPROVED' });
    await eventually(async () => (await h.client.getDeposit({ id: d.id }, h.ctx(co))).status === 'ASSIGNED');
    expect((await failure(share(co))).code).toBe('DEPOSIT_NOT_PENDING');
  });

  it('lists newest first with filters, the PAID alias, both pagination styles and company isolation', async () => {
    const co = await h.newCompany();
    const other = await h.newCompany();
    const ids: string[] = [];
    for (let i = 0; i < 7; i++) ids.push((await h.client.createPseDeposit(payer({ amountCents: 10_000n + BigInt(i), internalRef: `ref-${i}` }), h.ctx(co))).id);
    await h.client.createPseDeposit(payer(), h.ctx(other));
    for (const id of [ids[1]!, ids[4]!]) {
      await h.sandboxPost(`/sandbox/pse/${id}/pay`, { outcome: 'APPROVED', payerBank: 'Bancolombia' });
    }
    await h.sandboxPost(`/sandbox/pse/${ids[2]!}/pay`, { outcome: 'REJECTED' });
    await eventually(async () => (await h.client.listDeposits({ status: 'ASSIGNED', page: 0, limit: 20, cursorMode: false }, h.ctx(co))).total === 2);
    await eventually(async () => (await h.client.getDeposit({ id: ids[2]! }, h.ctx(co))).status === 'FAILED');
    const newestFirst = [...ids].reverse();

    const all = await h.client.listDeposits({ page: 0, limit: 0, cursorMode: false }, h.ctx(co));
    expect(all).toMatchObject({ total: 7, page: 0, limit: 20, totalPages: 1 });
    expect(all.deposits.map((d) => d.id)).toEqual(newestFirst);
    const paidOne = all.deposits.find((d) => d.id === ids[4])!;
    expect(paidOne).toMatchObject({
      status: 'ASSIGNED',
      source: 'PSE',
      amountCents: 10_004n,
      feeAmountCents: 1_000n,
      ivaAmountCents: 190n,
      netAmountCents: 8_814n,
      currency: 'COP',
      payerName: 'Ana María Pérez',
      payerFirstName: 'Ana María',
      payerLastName: 'Pérez',
      payerDocument: 'CC 1020304050',
      payerEmail: 'ana@example.com',
      payerBank: 'Bancolombia',
      internalRef: 'ref-4',
    });
    expect(paidOne.providerTransferId).toBeTruthy();
    expect(paidOne.providerConfirmedAt).toBeInstanceOf(Date);
    expect(paidOne.brebKey).toBeUndefined();
    expect(all.deposits.find((d) => d.id === ids[0])!.providerTransferId).toBeUndefined();

    const paid = await h.client.listDeposits({ status: 'PAID', page: 0, limit: 20, cursorMode: false }, h.ctx(co));
    expect(paid.deposits.map((d) => d.id)).toEqual([ids[4], ids[1]]);
    expect((await h.client.listDeposits({ status: 'FAILED', page: 0, limit: 20, cursorMode: false }, h.ctx(co))).deposits.map((d) => d.id)).toEqual([ids[2]]);
    expect((await h.client.listDeposits({ status: 'pending_confirm', rail: 'PSE', page: 0, limit: 20, cursorMode: false }, h.ctx(co))).total).toBe(4);
    expect((await h.client.listDeposits({ rail: 'BREB', page: 0, limit: 20, cursorMode: false }, h.ctx(co))).total).toBe(0);
    expect((await h.client.listDeposits({ externalId: 'cust-1', page: 0, limit: 20, cursorMode: false }, h.ctx(co))).total).toBe(0);
    expect((await h.client.listDeposits({ brebKeyId: 'bkey_x', page: 0, limit: 20, cursorMode: false }, h.ctx(co))).total).toBe(0);

    // Page style through three pages.
    const pages: string[] = [];
    for (let page = 0; page < 3; page++) {
      const r = await h.client.listDeposits({ page, limit: 3, cursorMode: false }, h.ctx(co));
      expect(r).toMatchObject({ total: 7, page, limit: 3, totalPages: 3 });
      expect(r.nextCursor).toBeUndefined();
      pages.push(...r.deposits.map((d) => d.id));
    }
    expect(pages).toEqual(newestFirst);
    // Cursor style: empty cursor = first page; next_cursor until the end.
    const seen: string[] = [];
    let cursor: string | undefined = '';
    let calls = 0;
    while (cursor !== undefined) {
      const r: depositV1.ListDepositsResponse = await h.client.listDeposits({ page: 0, limit: 3, cursorMode: true, cursor }, h.ctx(co));
      seen.push(...r.deposits.map((d) => d.id));
      cursor = r.nextCursor;
      calls++;
    }
    expect(calls).toBe(3);
    expect(seen).toEqual(newestFirst);

    // Isolation: the other company sees only its own; another's id reads as unknown.
    const theirs = await h.client.listDeposits({ page: 0, limit: 20, cursorMode: false }, h.ctx(other));
    expect(theirs.total).toBe(1);
    expect(theirs.deposits.some((d) => ids.includes(d.id))).toBe(false);
    expect((await failure(h.client.getDeposit({ id: ids[0]! }, h.ctx(other)))).code).toBe('DEPOSIT_NOT_FOUND');

    for (const bad of [{ status: 'NOPE' }, { rail: 'ACH' }, { limit: 101 }, { limit: -1 }, { page: -1 }, { cursorMode: true, cursor: '!!' }]) {
      const e = await failure(h.client.listDeposits({ page: 0, limit: 20, cursorMode: false, ...bad }, h.ctx(co)));
      expect(e.code).toBe('INVALID_REQUEST');
    }
  });

  it('SMTP unreachable → SERVICE_UNAVAILABLE', async () => {
    const co = await h.newCompany();
    const svc = await startDeposit({
      databaseUrl: h.tdb.url,
      natsUrl: NATS_URL,
      namespace: h.namespace,
      ledgerAddress: h.ledger.address,
      providerUrl: h.sandbox.url,
      smtpUrl: 'smtp://127.0.0.1:1',
      port: 0,
      env: { SMTP_TIMEOUT_MS: '2000' },
      logLevel: 'silent',
    });
    const c = policyClient<depositV1.DepositServiceServer>(depositV1.DepositServiceClient, svc.address, 'pse-deposit', depositAccess, 10_000);
    try {
      const d = await c.createPseDeposit(payer(), h.ctx(co));
      const e = await failure(c.shareByEmail({ depositId: d.id, recipientEmail: 'x@example.com' }, h.ctx(co)));
      expect(e.code).toBe('SERVICE_UNAVAILABLE');
    } finally {
      c.close();
      await svc.stop();
    }
  });

  it('PSE_PROVIDER_NOT_CONFIGURED and PSE_INFLOW_DISABLED', async () => {
    const co = await h.newCompany();
    for (const [env, code] of [
      [{ PSE_PROVIDER_URL: '' }, 'PSE_PROVIDER_NOT_CONFIGURED'],
      [{ PSE_INFLOW_ENABLED: 'false' }, 'PSE_INFLOW_DISABLED'],
    ] as const) {
      const svc = await startDeposit({
        databaseUrl: h.tdb.url,
        natsUrl: NATS_URL,
        namespace: h.namespace,
        ledgerAddress: h.ledger.address,
        providerUrl: h.sandbox.url,
        port: 0,
        env: { ...env },
        logLevel: 'silent',
      });
      const c = policyClient<depositV1.DepositServiceServer>(depositV1.DepositServiceClient, svc.address, 'pse-deposit', depositAccess, 10_000);
      try {
        expect((await failure(c.createPseDeposit(payer(), h.ctx(co)))).code).toBe(code);
      } finally {
        c.close();
        await svc.stop();
      }
    }
  });
});
