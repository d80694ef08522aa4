import { randomUUID } from 'node:crypto';
import { mkdirSync, writeFileSync } from 'node:fs';
import { AppError, Bus, createAsyncClient, createLogger, devMeshTls, type CallContext, type CompanyProfileClaims } from '@wallet/platform';
import { TEST_COMPANY_PROFILE, createTestDatabase, deleteNamespaceStreams, testNamespace, type TestDatabase } from '@wallet/platform/testing';
import { depositEventsV1, ledgerV1, receiptV1, transferEventsV1, type depositV1 } from '@wallet/proto';
import { PDFParse } from 'pdf-parse';
import { headers as natsHeaders } from '@nats-io/transport-node';
import { startReceipt, type StartedReceipt } from '../../src/testing.js';
import { receiptAccess } from '../../src/grpc/receipt.handlers.js';
import { policyClient } from '@wallet/platform/testing';

const NATS_URL = process.env.NATS_URL ?? 'nats://127.0.0.1:4222';
type Client = ReturnType<typeof createAsyncClient<receiptV1.ReceiptServiceServer>>;

/** The profile the gateway signs into the caller context for these companies: the receipt prints its name and NIT. */
const COMPANY: CompanyProfileClaims = { ...TEST_COMPANY_PROFILE, name: 'Distribuidora Andina de Café y Señales S.A.S.', nit: '900.123.456-7' };

async function pdfText(pdf: Uint8Array): Promise<{ text: string; pages: number }> {
  const parser = new PDFParse({ data: Buffer.from(pdf) });
  try {
    const r = await parser.getText();
    return { text: r.text, pages: r.total };
  } finally {
    await parser.destroy();
  }
}

describe('receipt service: read model from events, PDF receipts over gRPC', () => {
  let tdb: TestDatabase;
  let ns: string;
  let svc: StartedReceipt;
  let bus: Bus;
  let client: Client;
  /** A call as the gateway makes it for an API key of the company: its profile in the signed principal. */
  const ctx = (companyId: string, profile: Partial<CompanyProfileClaims> = {}): CallContext => ({
    requestId: randomUUID(),
    companyId,
    principal: { kind: 'apikey', companyId, keyId: 'test-key', scope: 'READ', profile: { ...COMPANY, ...profile } },
  });

  beforeAll(async () => {
    tdb = await createTestDatabase('receipt');
    ns = testNamespace();
    svc = await startReceipt({ databaseUrl: tdb.url, natsUrl: NATS_URL, namespace: ns });
    bus = await Bus.connect({ url: NATS_URL, namespace: ns, name: 'test-publisher', logger: createLogger('test', 'silent') });
    client = policyClient<receiptV1.ReceiptServiceServer>(receiptV1.ReceiptServiceClient, svc.address, 'receipt', receiptAccess, 15_000);
  });
  afterAll(async () => {
    client?.close();
    await bus?.close();
    await svc?.stop();
    await deleteNamespaceStreams(NATS_URL, ns).catch(() => undefined);
    await tdb?.drop();
  });

  type TKind = 'created' | 'dispatched' | 'completed' | 'failed';
  const STATUS: Record<TKind, ledgerV1.MovementStatus> = {
    created: ledgerV1.MovementStatus.PENDING,
    dispatched: ledgerV1.MovementStatus.PENDING,
    completed: ledgerV1.MovementStatus.COMPLETED,
    failed: ledgerV1.MovementStatus.FAILED,
  };

  /** A transfer.* event exactly as the transfer service publishes it (id = eventId, payload = proto3 JSON). */
  async function publishTransfer(kind: TKind, t: Partial<transferEventsV1.TransferEvent> & { transferId: string; companyId: string }, eventId = randomUUID()) {
    const occurredAt = t.occurredAt ?? new Date();
    const msg: transferEventsV1.TransferEvent = {
      eventId,
      rail: ledgerV1.Rail.BREB,
      status: STATUS[kind],
      amount: 123_456_789n,
      totalFee: 150_000n,
      ivaAmount: 28_500n,
      netAmount: 123_306_789n,
      targetName: 'María Fernanda Peñaloza Ávila',
      targetDocument: 'CC 1020304050',
      createdAt: new Date('2026-11-20T15:04:05Z'),
      approvalThreshold: 0,
      approvedBy: [],
      approvalRoles: [],
      ...t,
      occurredAt,
    };
    msg.eventId = eventId;
    await bus.publish({
      id: eventId,
      subject: `transfer.${kind}`,
      payload: transferEventsV1.TransferEvent.toJSON(msg),
      time: occurredAt.toISOString(),
      source: 'transfer',
    });
    return eventId;
  }

  async function publishDeposit(
    subject: string,
    companyId: string,
    deposit: depositV1.Deposit,
    occurredAt = new Date(),
    eventId = randomUUID(),
    source = 'pse-deposit',
  ) {
    const payload = depositEventsV1.DepositEvent.toJSON({ eventId, companyId, deposit, occurredAt });
    await bus.publish({ id: eventId, subject, payload, time: occurredAt.toISOString(), source });
    return eventId;
  }

  /** A PSE deposit as pse-deposit publishes it: 250,000 COP from Andrés Muñoz, fee and IVA, in this status. */
  const pseDeposit = (id: string, status: string): depositV1.Deposit => ({
    id,
    status,
    amountCents: 25_000_000n,
    feeAmountCents: 100_000n,
    ivaAmountCents: 19_000n,
    netAmountCents: 24_881_000n,
    currency: 'COP',
    source: 'PSE',
    payerFirstName: 'Andrés',
    payerLastName: 'Muñoz',
    payerDocument: 'CC 80123456',
    payerEmail: 'andres@example.co',
    internalRef: 'PEDIDO-981',
    paygatewayUrl: 'http://127.0.0.1:8090/pay/x',
    createdAt: new Date('2026-11-19T13:00:00Z'),
    expiresAt: new Date('2026-11-20T13:00:00Z'),
  });

  const txReceipt = (co: string, id: string) => client.getTransactionReceipt({ id }, ctx(co));
  const depReceipt = (co: string, id: string) => client.getDepositReceipt({ id }, ctx(co));
  const rowOf = async (table: string, id: string) => (await svc.db.query<Record<string, unknown>>(`select * from receipt.${table} where id = ?`, [id]))[0];

  it('a completed Bre-B send: one page with amounts, status, company, dates in Bogotá', async () => {
    const co = randomUUID();
    const id = randomUUID();
    await publishTransfer('created', {
      transferId: id,
      companyId: co,
      reference: 'FAC-2026-0042',
      description: 'Pago de nómina noviembre',
      bankName: 'Nequi',
      brebKeyType: 'PHONE',
      brebKeyValue: '3001234567',
      occurredAt: new Date('2026-11-20T15:04:05Z'),
    });
    await publishTransfer('dispatched', { transferId: id, companyId: co, providerTransferId: 'breb-77881', occurredAt: new Date('2026-11-20T15:04:06Z') });
    await publishTransfer('completed', {
      transferId: id,
      companyId: co,
      providerTransferId: 'breb-77881',
      completedAt: new Date('2026-11-20T15:04:09Z'),
      occurredAt: new Date('2026-11-20T15:04:09Z'),
    });
    await svc.waitIdle();

    const r = await txReceipt(co, id);
    expect(r.receiptNumber).toMatch(/^TRX-[0-9A-Z]{10}$/);
    expect(r.filename).toBe(`comprobante-${r.receiptNumber}.pdf`);
    expect(r.sha256).toMatch(/^[0-9a-f]{64}$/);
    expect(Buffer.from(r.pdf).subarray(0, 5).toString()).toBe('%PDF-');
    const { text, pages } = await pdfText(r.pdf);
    expect(pages).toBe(1);
    for (const s of [
      'Comprobante de transferencia',
      'Exitosa',
      '$ 1.234.567,89',
      '$ 1.500,00',
      '$ 285,00',
      '$ 1.236.352,89',
      'Distribuidora Andina de Café',
      '900.123.456-7',
      'María Fernanda Peñaloza Ávila',
      'Nequi',
      'FAC-2026-0042',
      'Pago de nómina noviembre',
      'Llave Bre-B',
      '3001234567 (PHONE)',
      '20 de noviembre de 2026, 10:04:05 a. m.',
      '20 de noviembre de 2026, 10:04:09 a. m.',
      'breb-77881',
      id,
      r.receiptNumber,
      r.sha256,
    ])
      expect(text).toContain(s);
    writeFileSync(`${process.env.RECEIPT_PDF_OUT ?? '/tmp'}/receipt-breb.pdf`, r.pdf);
  });

  it('a failed ACH send: error message, masked account, Fallida; never the full account number', async () => {
    const co = randomUUID();
    const id = randomUUID();
    const base = {
      transferId: id,
      companyId: co,
      rail: ledgerV1.Rail.ACH,
      amount: 50_000_000n,
      totalFee: 300_000n,
      ivaAmount: 57_000n,
      netAmount: 49_700_000n,
      targetName: 'Ferretería El Ñandú Ltda.',
      targetDocument: 'NIT 800765432',
      bankName: 'Bancolombia',
      bankAccountType: 'AHORROS',
      bankAccountNumberMasked: '****6789',
      createdAt: new Date('2026-11-21T01:00:00Z'),
    };
    await publishTransfer('created', { ...base, occurredAt: new Date('2026-11-21T01:00:00Z') });
    await publishTransfer('failed', { ...base, errorMessage: 'Cuenta destino inexistente o cancelada', occurredAt: new Date('2026-11-21T01:00:30Z') });
    await svc.waitIdle();
    const r = await txReceipt(co, id);
    const { text, pages } = await pdfText(r.pdf);
    expect(pages).toBe(1);
    for (const s of [
      'Fallida',
      'Cuenta destino inexistente o cancelada',
      '****6789',
      '$ 500.000,00',
      '$ 3.000,00',
      '$ 570,00',
      'Bancolombia',
      'AHORROS',
      'Ferretería El Ñandú Ltda.',
      '20 de noviembre de 2026, 08:00:00 p. m.',
    ])
      expect(text).toContain(s);
    expect(text).not.toMatch(/\d{5,}6789/);
    writeFileSync(`${process.env.RECEIPT_PDF_OUT ?? '/tmp'}/receipt-ach-failed.pdf`, r.pdf);
  });

  it('a PSE deposit (ASSIGNED) and a Bre-B collect-key deposit', async () => {
    const co = randomUUID();
    const pseId = `dep_${randomUUID().replace(/-/g, '').slice(0, 24)}`;
    const pse = pseDeposit(pseId, 'PENDING_CONFIRM');
    await publishDeposit('deposit.created', co, pse, new Date('2026-11-19T13:00:00Z'));
    await publishDeposit(
      'deposit.paid',
      co,
      { ...pse, status: 'ASSIGNED', payerBank: 'Banco de Bogotá', providerTransferId: 'pse-5544', providerConfirmedAt: new Date('2026-11-19T13:05:00Z') },
      new Date('2026-11-19T13:05:01Z'),
    );

    const brebId = `dep_${randomUUID().replace(/-/g, '').slice(0, 24)}`;
    const breb: depositV1.Deposit = {
      id: brebId,
      status: 'ASSIGNED',
      amountCents: 7_000_000n,
      feeAmountCents: 50_000n,
      ivaAmountCents: 9_500n,
      netAmountCents: 6_940_500n,
      currency: 'COP',
      source: 'BREB',
      brebKey: { id: 'ck_1', externalId: 'cliente-77', name: 'Caja Bogotá Norte', value: '@andinacafe77' },
      payerName: 'Luis Gómez',
      payerDocument: 'CC 79111222',
      payerBank: 'Nequi',
      providerTransferId: 'tr-abc',
      providerConfirmedAt: new Date('2026-11-19T20:30:00Z'),
      createdAt: new Date('2026-11-19T20:30:00Z'),
    };
    await publishDeposit('deposit.paid', co, breb, new Date('2026-11-19T20:30:01Z'), randomUUID(), 'collect-key');
    await svc.waitIdle();

    const p = await depReceipt(co, pseId);
    expect(p.receiptNumber).toMatch(/^DEP-[0-9A-Z]{10}$/);
    const pt = await pdfText(p.pdf);
    expect(pt.pages).toBe(1);
    for (const s of [
      'Comprobante de recaudo',
      'Pagado',
      'PSE',
      '$ 250.000,00',
      '$ 1.000,00',
      '$ 190,00',
      '$ 248.810,00',
      'Andrés Muñoz',
      'Banco de Bogotá',
      'PEDIDO-981',
      'Distribuidora Andina de Café',
      '19 de noviembre de 2026, 08:05:00 a. m.',
    ])
      expect(pt.text).toContain(s);

    const b = await depReceipt(co, brebId);
    const bt = await pdfText(b.pdf);
    expect(bt.pages).toBe(1);
    for (const s of ['Comprobante de recaudo', 'Pagado', 'Bre-B', '@andinacafe77', 'Caja Bogotá Norte', '$ 70.000,00', '$ 69.405,00', 'Luis Gómez', 'Nequi'])
      expect(bt.text).toContain(s);
    writeFileSync(`${process.env.RECEIPT_PDF_OUT ?? '/tmp'}/receipt-deposit.pdf`, b.pdf);
  });

  it('duplicates (same id, and same content under a new id) change nothing', async () => {
    const co = randomUUID();
    const id = randomUUID();
    const at = new Date('2026-11-20T18:00:00Z');
    const e1 = await publishTransfer('created', { transferId: id, companyId: co, occurredAt: at });
    await publishTransfer('completed', {
      transferId: id,
      companyId: co,
      completedAt: new Date('2026-11-20T18:00:05Z'),
      occurredAt: new Date('2026-11-20T18:00:05Z'),
    });
    await svc.waitIdle();
    const before = await txReceipt(co, id);
    const rowBefore = await rowOf('transactions', id);
    // Same id: JetStream's duplicate window drops a re-publish; a redelivery past the window reaches the
    // inbox (forced here with the same ce-id under another Nats-Msg-Id).
    await publishTransfer('created', { transferId: id, companyId: co, occurredAt: at }, e1);
    const h = natsHeaders();
    h.set('ce-id', e1);
    h.set('ce-type', 'transfer.created');
    h.set('ce-source', 'transfer');
    h.set('content-type', 'application/json');
    const replay = transferEventsV1.TransferEvent.toJSON({
      eventId: e1,
      transferId: id,
      companyId: co,
      rail: ledgerV1.Rail.BREB,
      status: ledgerV1.MovementStatus.PENDING,
      amount: 1n,
      totalFee: 0n,
      ivaAmount: 0n,
      netAmount: 1n,
      targetName: 'Alguien Distinto',
      targetDocument: 'CC 1',
      createdAt: at,
      occurredAt: new Date('2030-01-01T00:00:00Z'),
      approvalThreshold: 0,
      approvedBy: [],
      approvalRoles: [],
    });
    await bus.js.publish(bus.subject('transfer.created'), JSON.stringify(replay), { msgID: `${e1}-late`, headers: h });
    // Same content, new id (a re-emitted older event).
    await publishTransfer('created', { transferId: id, companyId: co, occurredAt: at });
    await publishTransfer('completed', {
      transferId: id,
      companyId: co,
      completedAt: new Date('2026-11-20T18:00:05Z'),
      occurredAt: new Date('2026-11-20T18:00:05Z'),
    });
    await svc.waitIdle();
    const after = await txReceipt(co, id);
    expect(after.sha256).toBe(before.sha256);
    expect(await rowOf('transactions', id)).toEqual(rowBefore);
    expect((await pdfText(after.pdf)).text).toContain('Exitosa');
    expect((await svc.db.query('select 1 from receipt.inbox where event_id = ?', [e1])).length).toBe(1);
  });

  it('out of order: completed before created keeps the completion and fills the creation fields; status never goes back', async () => {
    const co = randomUUID();
    const id = randomUUID();
    // The completed event carries only part of the data (a sparse publisher); created brings the rest.
    await publishTransfer('completed', {
      transferId: id,
      companyId: co,
      targetName: '',
      targetDocument: '',
      reference: undefined,
      amount: 9_876_543n,
      totalFee: 0n,
      ivaAmount: 0n,
      netAmount: 0n,
      createdAt: undefined,
      completedAt: new Date('2026-11-21T14:30:15Z'),
      providerTransferId: 'breb-ooo',
      occurredAt: new Date('2026-11-21T14:30:15Z'),
    });
    await svc.waitIdle();
    let row = await rowOf('transactions', id);
    expect(row?.status).toBe('COMPLETED');
    expect(row?.target_name).toBeNull();
    await publishTransfer('created', {
      transferId: id,
      companyId: co,
      amount: 9_876_543n,
      totalFee: 20_000n,
      ivaAmount: 3_800n,
      targetName: 'Óscar Díaz',
      targetDocument: 'CE 445566',
      reference: 'OOO-1',
      createdAt: new Date('2026-11-21T14:30:00Z'),
      occurredAt: new Date('2026-11-21T14:30:00Z'),
    });
    await svc.waitIdle();
    row = await rowOf('transactions', id);
    expect(row?.status).toBe('COMPLETED');
    const r = await txReceipt(co, id);
    const { text } = await pdfText(r.pdf);
    for (const s of [
      'Exitosa',
      'Óscar Díaz',
      'CE 445566',
      'OOO-1',
      '$ 98.765,43',
      '$ 200,00',
      '$ 38,00',
      'breb-ooo',
      '21 de noviembre de 2026, 09:30:00 a. m.',
      '21 de noviembre de 2026, 09:30:15 a. m.',
    ])
      expect(text).toContain(s);
    expect(text).not.toContain('Pendiente');
  });

  it('company isolation and unknown ids → NOT_FOUND', async () => {
    const co = randomUUID();
    const other = randomUUID();
    const id = randomUUID();
    await publishTransfer('created', { transferId: id, companyId: co });
    await svc.waitIdle();
    await expect(txReceipt(co, id)).resolves.toBeDefined();
    const code = async (p: Promise<unknown>) => {
      try {
        await p;
        return 'OK';
      } catch (e) {
        return (e as AppError).code;
      }
    };
    expect(await code(txReceipt(other, id))).toBe('TRANSACTION_NOT_FOUND');
    expect(await code(txReceipt(co, randomUUID()))).toBe('TRANSACTION_NOT_FOUND');
    expect(await code(depReceipt(co, id))).toBe('DEPOSIT_NOT_FOUND');
    expect(await code(depReceipt(other, 'dep_unknown'))).toBe('DEPOSIT_NOT_FOUND');
    expect(await code(client.getTransactionReceipt({ id }, { requestId: randomUUID() }))).toBe('CALLER_NOT_ALLOWED');
  });

  it("prints the company's name and NIT from the signed caller context's profile, and refuses a context without one", async () => {
    const co = randomUUID();
    const id = randomUUID();
    await publishTransfer('created', { transferId: id, companyId: co });
    await svc.waitIdle();
    const signed = await client.getTransactionReceipt({ id }, ctx(co, { name: 'Comercializadora Firmada S.A.S.', nit: '901.222.333-4' }));
    const { text } = await pdfText(signed.pdf);
    expect(text).toContain('Comercializadora Firmada S.A.S.');
    expect(text).toContain('901.222.333-4');
    expect(text).not.toContain('Distribuidora Andina');
    const code = async (p: Promise<unknown>) => {
      try {
        await p;
        return 'OK';
      } catch (e) {
        return (e as AppError).code;
      }
    };
    const user = {
      requestId: randomUUID(),
      companyId: co,
      principal: { kind: 'user' as const, companyId: co, userId: 'u-1', email: 'u@example.com', role: 'VIEWER' },
    };
    expect(await code(client.getTransactionReceipt({ id }, user))).toBe('CALLER_NOT_ALLOWED');
  });

  it("a burst of events (pages of several, out of order, a clash with another company's id) ends as applying them one by one", async () => {
    const co = randomUUID();
    const other = randomUUID();
    const ids: string[] = Array.from({ length: 20 }, () => randomUUID());
    const at = (s: number) => new Date(Date.UTC(2026, 10, 22, 12, 0, s));
    // Published back to back, faster than the consumer commits: they reach it in pages.
    for (const [k, id] of ids.entries()) {
      if (k % 4 === 0) {
        await publishTransfer('completed', { transferId: id, companyId: co, providerTransferId: `p-${k}`, completedAt: at(9), occurredAt: at(9) });
        await publishTransfer('created', { transferId: id, companyId: co, reference: `R-${k}`, occurredAt: at(1) });
      } else {
        await publishTransfer('created', { transferId: id, companyId: co, reference: `R-${k}`, occurredAt: at(1) });
        await publishTransfer('dispatched', { transferId: id, companyId: co, providerTransferId: `p-${k}`, occurredAt: at(2) });
        if (k % 4 !== 3)
          await publishTransfer('completed', { transferId: id, companyId: co, providerTransferId: `p-${k}`, completedAt: at(9), occurredAt: at(9) });
      }
    }
    await publishTransfer('failed', { transferId: ids[1]!, companyId: other, errorMessage: 'otra empresa', occurredAt: at(30) }); // same id, another company
    await svc.waitIdle();
    const rows = await svc.db.prepared<{
      id: string;
      company_id: string;
      status: string;
      reference: string | null;
      provider_transfer_id: string | null;
      error_message: string | null;
    }>('select id, company_id, status, reference, provider_transfer_id, error_message from receipt.transactions where id = any($1::text[])', [ids]);
    expect(rows).toHaveLength(20);
    for (const r of rows) {
      const k = ids.indexOf(r.id);
      expect(r).toMatchObject({ company_id: co, reference: `R-${k}`, provider_transfer_id: `p-${k}`, error_message: null });
      expect(r.status).toBe(k % 4 === 3 ? 'PENDING' : 'COMPLETED');
    }
  });

  it('rebuild from the streams gives the same receipts (same sha256)', async () => {
    const rows = await svc.db.query<{ id: string; company_id: string }>('select id, company_id from receipt.transactions');
    const deps = await svc.db.query<{ id: string; company_id: string }>('select id, company_id from receipt.deposits');
    expect(rows.length).toBeGreaterThan(3);
    expect(deps.length).toBe(2);
    // One receipt after the other: rendering every PDF of the suite at once measures the machine, not the rebuild.
    const hashes = async () => {
      const out: string[] = [];
      for (const r of rows) out.push((await txReceipt(r.company_id, r.id)).sha256);
      for (const r of deps) out.push((await depReceipt(r.company_id, r.id)).sha256);
      return out;
    };
    const before = await hashes();
    await svc.rebuild();
    expect(Number((await svc.db.query<{ n: string }>('select count(*)::text as n from receipt.transactions'))[0]!.n)).toBe(rows.length);
    expect(await hashes()).toEqual(before);
    // every receipt rendered and signed twice, one after the other: 73 s for the whole file on a quiet CI run, 166 s for
    // this test alone beside two other suites (a time-out, not a failure of the rebuild)
  }, 300_000);

  describe('public verification (VerifyReceipt: the page the QR opens)', () => {
    const verify = (receiptNumber: string, hashPrefix: string) => client.verifyReceipt({ receiptNumber, hashPrefix }, { requestId: randomUUID() });
    const codeOf = async (p: Promise<unknown>) =>
      p.then(
        () => 'OK',
        (e: AppError) => e.code,
      );

    it('finds an issued receipt by its number and hash prefix; shows what it said and what the operation is now', async () => {
      const co = randomUUID();
      const id = randomUUID();
      await publishTransfer('created', { transferId: id, companyId: co, targetDocument: 'CC 5566778899', occurredAt: new Date('2026-11-20T15:04:05Z') });
      await svc.waitIdle();
      const pending = await txReceipt(co, id);
      const h = pending.sha256.slice(0, 16);

      const v1 = await verify(pending.receiptNumber, h);
      expect(v1).toMatchObject({
        receiptNumber: pending.receiptNumber,
        sha256: pending.sha256,
        issued: {
          title: 'Comprobante de transferencia',
          companyName: COMPANY.name,
          companyNit: COMPANY.nit,
          statusLabel: 'Pendiente',
          tone: 'pending',
          headline: { label: 'Valor transferido', value: '$ 1.234.567,89' },
        },
        now: { statusLabel: 'Pendiente', tone: 'pending', sameContent: true },
      });
      expect(v1.signers).toEqual([{ name: 'Wallet receipts (development)', sha256: expect.stringMatching(/^([0-9A-F]{2}:){31}[0-9A-F]{2}$/) }]);
      expect(v1.firstIssuedAt!.getTime()).toBeGreaterThan(Date.now() - 60_000);
      // nothing of the beneficiary: a link travels further than the PDF
      const shown = JSON.stringify(receiptV1.ReceiptVerification.toJSON(v1));
      for (const party of ['Peñaloza', '5566778899', 'Nequi']) expect(shown).not.toContain(party);
      // case and spaces as a reader may type them
      expect((await verify(` ${pending.receiptNumber.toLowerCase()} `, h.toUpperCase())).sha256).toBe(pending.sha256);
      // downloading it again records nothing new
      await txReceipt(co, id);
      expect(await svc.db.query('select 1 from receipt.issued_receipts where receipt_number = ?', [pending.receiptNumber])).toHaveLength(1);

      // the transfer completes: the pending receipt still verifies, and says the operation moved on
      await publishTransfer('completed', {
        transferId: id,
        companyId: co,
        completedAt: new Date('2026-11-20T15:04:09Z'),
        occurredAt: new Date('2026-11-20T15:04:09Z'),
      });
      await svc.waitIdle();
      expect(await verify(pending.receiptNumber, h)).toMatchObject({
        issued: { statusLabel: 'Pendiente' },
        now: { statusLabel: 'Exitosa', tone: 'ok', sameContent: false },
      });
      const done = await txReceipt(co, id);
      expect(done.receiptNumber).toBe(pending.receiptNumber);
      expect(await verify(done.receiptNumber, done.sha256.slice(0, 16))).toMatchObject({
        sha256: done.sha256,
        issued: { statusLabel: 'Exitosa', tone: 'ok' },
        now: { statusLabel: 'Exitosa', sameContent: true },
      });
    });

    it('a deposit receipt verifies too', async () => {
      const co = randomUUID();
      const id = `dep_${randomUUID().replace(/-/g, '').slice(0, 24)}`;
      await publishDeposit('deposit.paid', co, { ...pseDeposit(id, 'ASSIGNED'), providerConfirmedAt: new Date('2026-11-19T13:05:00Z') });
      await svc.waitIdle();
      const r = await depReceipt(co, id);
      const v = await verify(r.receiptNumber, r.sha256.slice(0, 16));
      expect(v).toMatchObject({
        receiptNumber: r.receiptNumber,
        issued: { title: 'Comprobante de recaudo', statusLabel: 'Pagado' },
        now: { sameContent: true },
      });
      const shown = JSON.stringify(receiptV1.ReceiptVerification.toJSON(v));
      for (const party of ['Andrés', '80123456', 'PEDIDO-981', 'andres@']) expect(shown).not.toContain(party);
    });

    it('any other pair answers RECEIPT_NOT_FOUND, the same whether the number exists or not', async () => {
      const co = randomUUID();
      const id = randomUUID();
      await publishTransfer('created', { transferId: id, companyId: co });
      await svc.waitIdle();
      const r = await txReceipt(co, id);
      const h = r.sha256.slice(0, 16);
      const flip = (c: string) => (c === '0' ? '1' : '0');
      const cases: Array<[string, string]> = [
        [r.receiptNumber, `${h.slice(0, 15)}${flip(h[15]!)}`], // one digit of the hash wrong
        [r.receiptNumber, r.sha256.slice(1, 17)], // another 16 digits of the same hash
        [r.receiptNumber.replace(/^TRX/, 'DEP'), h], // the other kind
        ['TRX-0000000000', h], // a number never issued
        [r.receiptNumber, h.slice(0, 15)], // too short
        [r.receiptNumber, r.sha256], // the full hash is not the QR's prefix
        [r.receiptNumber, 'zzzzzzzzzzzzzzzz'],
        ['TRX-ILOU000000', h], // not a receipt number's alphabet
        ['', ''],
        [`${r.receiptNumber}' or 1=1 --`, h],
      ];
      for (const [n, p] of cases) expect({ n, p, code: await codeOf(verify(n, p)) }).toEqual({ n, p, code: 'RECEIPT_NOT_FOUND' });
    });

    it('only the gateway may ask', async () => {
      const other = createAsyncClient<receiptV1.ReceiptServiceServer>(receiptV1.ReceiptServiceClient, svc.address, {
        deadlineMs: 15_000,
        mesh: { tls: devMeshTls('transfer'), server: 'receipt' },
      });
      try {
        expect(await codeOf(other.verifyReceipt({ receiptNumber: 'TRX-0000000000', hashPrefix: '0'.repeat(16) }, { requestId: randomUUID() }))).toBe(
          'CALLER_NOT_ALLOWED',
        );
      } finally {
        other.close();
      }
    });

    it('a rebuild of the read model keeps the issued receipts verifiable', async () => {
      const co = randomUUID();
      const id = randomUUID();
      await publishTransfer('created', { transferId: id, companyId: co });
      await svc.waitIdle();
      const r = await txReceipt(co, id);
      await svc.rebuild();
      expect(await verify(r.receiptNumber, r.sha256.slice(0, 16))).toMatchObject({ sha256: r.sha256, now: { sameContent: true } });
    }, 120_000);
  });

  it('a long name stays on one page (truncated) and odd characters do not break the PDF', async () => {
    const co = randomUUID();
    const id = randomUUID();
    await publishTransfer('created', {
      transferId: id,
      companyId: co,
      targetName: `Ñoño ${'Supercalifragilístico '.repeat(20)}✓ 漢字`,
      description: 'x'.repeat(400),
    });
    await svc.waitIdle();
    const r = await client.getTransactionReceipt({ id }, ctx(co, { name: 'Empresa '.repeat(30), nit: '900.000.000-1' }));
    const { text, pages } = await pdfText(r.pdf);
    expect(pages).toBe(1);
    expect(text).toContain('Ñoño Supercalifragilístico');
    expect(text).toContain('…');
    expect(text).toContain('Pendiente');
  });
});

beforeAll(() => {
  mkdirSync(process.env.RECEIPT_PDF_OUT ?? '/tmp', { recursive: true });
});
