import pg from 'pg';
import type { Database } from '@wallet/platform';
import { eventually } from '@wallet/platform/testing';
import { depositV1 } from '@wallet/proto';
import { startDeposit } from '../../src/testing.js';
import { NATS_URL, failure, payer, startHarness, type Harness } from './harness.js';
import { depositAccess } from '../../src/grpc/deposit.handlers.js';
import { policyClient } from '@wallet/platform/testing';
import { SqlDepositStore } from '../../src/persistence/deposit.store.js';
import { SqlDepositCounts } from '../../src/persistence/deposit-counts.js';

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

  it("every listing shape follows an index in its order (company[, status | source | key], created_at desc, id desc): no sort of the company's deposits", async () => {
    // A page that sorted (or walked the company's index checking a filter) would read every deposit of the
    // company first: docs/benchmarks.md "The deposits listing at scale". Each statement is planned as the
    // service runs it twice: with its values (the first calls of a connection) and as the generic plan a
    // connection keeps after a few calls (the same for every value).
    const co = await h.newCompany();
    for (let i = 0; i < 3; i++) await h.client.createPseDeposit(payer({ amountCents: 20_000n + BigInt(i) }), h.ctx(co));
    const seen: Array<{ sql: string; params: readonly unknown[] }> = [];
    const db = {
      prepared: (sql: string, params: readonly unknown[] = []) => {
        seen.push({ sql, params });
        return h.deposit.db.prepared(sql, params);
      },
    } as unknown as Database;
    const store = new SqlDepositStore(db);
    const now = new Date();
    const page = { limit: 2, offset: 0, withTotal: false, now };
    const first = await store.list(co, {}, page);
    const after = first.items.at(-1)!.cursor;
    // each shape: its filter, its page, the index of each statement (the page's, then the total's when asked)
    const shapes: Array<[Parameters<SqlDepositStore['list']>[1], Partial<Parameters<SqlDepositStore['list']>[2]>, string[]]> = [
      [{}, {}, ['deposits_company_idx']],
      [{}, { after }, ['deposits_company_idx']],
      [{}, { offset: 4 }, ['deposits_company_idx']],
      // a status shows one to three stored states: each read from the status index in its order
      [{ status: 'ASSIGNED' }, {}, ['deposits_company_status_idx']],
      [{ status: 'EXPIRED' }, { after }, ['deposits_company_status_idx']],
      [{ status: 'REVERSED' }, { offset: 4 }, ['deposits_company_status_idx']],
      // a status and a rail: either index gives the order, the other condition filters
      [{ status: 'PENDING_CONFIRM', source: 'PSE' }, {}, ['deposits_company_(status|source_created)_idx']],
      // a rail or a key alone: their own indexes, built online (pseDepositOnlineIndexes)
      [{ source: 'BREB' }, {}, ['deposits_company_source_created_idx']],
      [{ source: 'PSE' }, { after }, ['deposits_company_source_created_idx']],
      [{ brebKeyId: 'bkey_x' }, {}, ['deposits_company_breb_key_created_idx']],
      [{ externalId: 'cust-1' }, { after }, ['deposits_company_breb_ext_created_idx']],
      // the totals of page style: a status's counted from the status index, not by walking the company's deposits
      [{ status: 'FAILED' }, { withTotal: true }, ['deposits_company_status_idx', 'deposits_company_status_idx']],
      [{ source: 'BREB' }, { withTotal: true }, ['deposits_company_source_created_idx', 'deposits_company_source_created_idx']],
    ];
    // page-style totals once the deposit counts are ready (docs/deposit-counts.md): the company's counts, by their key;
    // the states the clock decides, and a key's deposits, still counted from the deposits' indexes
    const counted = new SqlDepositStore(db, undefined, new SqlDepositCounts(db));
    const countedShapes: typeof shapes = [
      [{ status: 'FAILED' }, { withTotal: true }, ['deposits_company_status_idx', 'deposit_counts_pkey']],
      [{}, { withTotal: true }, ['deposits_company_idx', 'deposit_counts_pkey']],
      [
        { status: 'EXPIRED', source: 'PSE' },
        { withTotal: true },
        ['deposits_company_(status|source_created)_idx', 'deposit_counts_pkey', 'deposits_company_(status|source_created)_idx'],
      ],
      [{ brebKeyId: 'bkey_x' }, { withTotal: true }, ['deposits_company_breb_key_created_idx', 'deposits_company_breb_key_created_idx']],
    ];
    while (!(await new SqlDepositCounts(h.deposit.db).backfill()).done);
    await counted.list(co, {}, { ...page, withTotal: true }); // it reads that the counts are ready once, then remembers
    await h.deposit.db.query('analyze pse_deposit.deposits');
    seen.length = 0;
    for (const [f, p] of shapes) await store.list(co, f, { ...page, ...p });
    for (const [f, p] of countedShapes) await counted.list(co, f, { ...page, ...p });
    const expected = [...shapes, ...countedShapes].flatMap(([f, p, indexes]) => indexes.map((index) => ({ shape: { f, p }, index })));
    expect(seen).toHaveLength(expected.length);
    // the unordered key indexes the ordered ones replace are gone (each online index's `replaces`, at a start that migrates)
    const [old] = await h.deposit.db.query<{ key: string | null; ext: string | null }>(
      `select to_regclass('pse_deposit.deposits_breb_key_idx')::text as key, to_regclass('pse_deposit.deposits_breb_ext_idx')::text as ext`,
    );
    expect(old).toEqual({ key: null, ext: null });

    interface PlanNode {
      'Node Type': string;
      'Index Name'?: string;
      'Function Name'?: string;
      Plans?: PlanNode[];
    }
    const nodes = (n: PlanNode): PlanNode[] => [n, ...(n.Plans ?? []).flatMap(nodes)];
    const client = new pg.Client({ connectionString: h.tdb.url });
    await client.connect();
    try {
      const literal = (v: unknown): string =>
        Array.isArray(v) ? `array[${v.map((x) => client.escapeLiteral(String(x))).join(', ')}]::text[]` : client.escapeLiteral(String(v));
      for (const [i, q] of seen.entries()) {
        const { shape, index } = expected[i]!;
        await client.query('begin');
        try {
          // with scans that need no index ruled out, a plan that must sort shows a Sort node
          await client.query('set local enable_seqscan = off');
          await client.query('set local enable_bitmapscan = off');
          const custom = (await client.query(`explain (format json) ${q.sql}`, [...q.params])).rows[0]['QUERY PLAN'];
          await client.query(`prepare listing_shape as ${q.sql}`);
          await client.query('set local plan_cache_mode = force_generic_plan');
          const generic = (await client.query(`explain (format json) execute listing_shape(${q.params.map(literal).join(', ')})`)).rows[0]['QUERY PLAN'];
          await client.query('deallocate listing_shape');
          for (const plan of [custom, generic]) {
            const all = nodes((plan as Array<{ Plan: PlanNode }>)[0]!.Plan);
            const why = `${JSON.stringify(shape)}\n${JSON.stringify(plan)}`;
            expect({ why, index: all.some((n) => new RegExp(`^${index}$`).test(n['Index Name'] ?? '')) }).toEqual({ why, index: true });
            // the only sort allowed merges a status's stored states (a page from each): it sits above the unnest of them
            const sorts = all.filter((n) => /^(Incremental )?Sort$/.test(n['Node Type']));
            const merging = sorts.filter(
              (s) =>
                nodes(s).some((n) => n['Function Name'] === 'unnest') &&
                !nodes(s)
                  .slice(1)
                  .some((n) => sorts.includes(n)),
            );
            expect({ why, sorts: sorts.length }).toEqual({ why, sorts: merging.length });
          }
        } finally {
          await client.query('rollback');
        }
      }
    } finally {
      await client.end();
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
