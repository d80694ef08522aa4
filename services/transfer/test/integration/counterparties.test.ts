import { randomUUID } from 'node:crypto';
import { transferV1, counterpartyEventsV1 } from '@wallet/proto';
import { NATS_URL, ctxOf, failure, newCompany, resolve, setFaults, startHarness, type CompanySetup, type Harness } from './harness.js';

/**
 * Counterparties (payees) through the real gRPC server, Postgres, NATS and the sandbox: Bre-B
 * verified by the directory, ACH by a prenote (decided by the signed callback, or by the sweeper
 * asking the rail), a change of account resetting the verification, idempotency, listing, company
 * isolation, bad input, and the account number never at rest in clear.
 */
describe('counterparties', () => {
  let h: Harness;

  beforeAll(async () => {
    h = await startHarness({ transferEnv: { COUNTERPARTY_PRENOTE_CHECK_SECONDS: '1' }, sandboxEnv: { SANDBOX_ACH_PRENOTE_MS: '200' } });
  }, 60_000);
  afterAll(async () => {
    await h?.stop();
  });

  const create = (co: CompanySetup, req: Partial<transferV1.CreateCounterpartyRequest>) =>
    h.client.createCounterparty(transferV1.CreateCounterpartyRequest.fromPartial({ requestHash: randomUUID(), ...req }), ctxOf(co.id));
  const get = (co: CompanySetup, id: string) => h.client.getCounterparty({ id }, ctxOf(co.id));

  /** A fresh ACH account number (the sandbox's prenote behaviours are per number). */
  const accountNumber = () =>
    `4${Math.floor(Math.random() * 1e10)
      .toString()
      .padStart(10, '0')}`.replace(/17$/, '18');
  const account = (n: string, extra: Partial<transferV1.BankAccountDestination> = {}): transferV1.BankAccountDestination => ({
    bankId: 1,
    accountTypeId: 20,
    accountNumber: n,
    documentTypeId: 1,
    documentNumber: '1020304050',
    holderFirstName: 'Ana María',
    holderLastName: 'Pérez Gómez',
    bankName: 'Bancolombia',
    bankAchCode: '1007',
    ...extra,
  });

  async function waitForStatus(co: CompanySetup, id: string, statuses: string[], timeoutMs = 10_000): Promise<transferV1.Counterparty> {
    const deadline = Date.now() + timeoutMs;
    for (;;) {
      const c = await get(co, id);
      if (statuses.includes(c.verification!.status)) return c;
      if (Date.now() > deadline) throw new Error(`counterparty ${id} is ${c.verification!.status}, expected ${statuses.join(', ')}`);
      await new Promise((r) => setTimeout(r, 50));
    }
  }

  async function row(id: string): Promise<Record<string, unknown>> {
    const rows = await h.transfer!.db.query<Record<string, unknown>>('select * from transfer.counterparties where id = ?', [id]);
    return rows[0]!;
  }

  async function prenoteBehaviour(n: string, b: { delayMs: number; rejectionRate: number; reasonCode?: string }): Promise<void> {
    const res = await fetch(`${h.sandbox.url}/sandbox/ach/accounts/${n}/prenote-behaviour`, {
      method: 'PUT',
      headers: { 'content-type': 'application/json' },
      body: JSON.stringify(b),
    });
    expect(res.status).toBe(200);
  }

  async function sandboxPrenote(prenoteId: string): Promise<{ status: string }> {
    return (await (await fetch(`${h.sandbox.url}/ach/prenotes/${prenoteId}`)).json()) as { status: string };
  }

  /** The counterparty.* events of the COUNTERPARTIES stream, decoded (what subscribers get). */
  async function counterpartyEvents(id: string): Promise<string[]> {
    const { connect } = await import('@nats-io/transport-node');
    const { jetstreamManager } = await import('@nats-io/jetstream');
    const nc = await connect({ servers: NATS_URL });
    try {
      const jsm = await jetstreamManager(nc);
      const stream = `${h.namespace.toUpperCase()}_COUNTERPARTIES`;
      const info = await jsm.streams.info(stream);
      const out: string[] = [];
      for (let seq = info.state.first_seq; seq <= info.state.last_seq && info.state.messages > 0; seq++) {
        const m = await jsm.streams.getMessage(stream, { seq });
        if (!m) continue;
        const e = counterpartyEventsV1.CounterpartyEvent.fromJSON(m.json());
        if (e.counterparty?.id === id) out.push(`${m.subject.slice(h.namespace.length + 1)}:${e.counterparty.verification!.status}`);
      }
      return out;
    } finally {
      await nc.close();
    }
  }

  async function expectEvents(id: string, expected: string[]): Promise<void> {
    const deadline = Date.now() + 8_000;
    while (Date.now() < deadline && (await counterpartyEvents(id)).length < expected.length) await new Promise((r) => setTimeout(r, 100));
    expect(await counterpartyEvents(id)).toEqual(expected);
  }

  async function brebHolder(co: CompanySetup, key: string) {
    const r = await resolve(h, co.id, key);
    if (!r.found) throw new Error(`key ${key}: ${r.errorCode}`);
    return r;
  }

  describe('Bre-B (directory)', () => {
    it('a key whose holder the directory names as given is VERIFIED at once, with its event', async () => {
      const co = await newCompany(h);
      const r = await brebHolder(co, '3001234567');
      const c = await create(co, {
        name: 'Proveedor Uno',
        brebKey: { type: 'AUTO', value: '3001234567' },
        documentTypeId: 1,
        documentNumber: r.recipient!.idValue,
        holderName: r.recipient!.fullName.toLowerCase(),
        tags: ['supplier'],
      });
      expect(c).toMatchObject({ name: 'Proveedor Uno', rail: 'BREB', brebKey: { type: 'PHONE', value: '3001234567' }, tags: ['supplier'], version: 2 });
      expect(c.id).toMatch(/^cpty_[a-z0-9]{24}$/);
      expect(c.verification).toMatchObject({ status: 'VERIFIED', method: 'DIRECTORY' });
      expect(c.verification!.decidedAt).toBeInstanceOf(Date);
      await expectEvents(c.id, ['counterparty.verified:VERIFIED']);
    });

    it('another holder name → FAILED NAME_MISMATCH; another document → DOCUMENT_MISMATCH; an unknown key → KEY_NOT_FOUND', async () => {
      const co = await newCompany(h);
      const r = await brebHolder(co, '3001234568');
      const base = { name: 'X', brebKey: { type: 'PHONE', value: '3001234568' }, documentTypeId: 1 };
      const name = await create(co, { ...base, documentNumber: r.recipient!.idValue, holderName: 'Otra Persona Distinta' });
      expect(name.verification).toMatchObject({ status: 'FAILED', reasonCode: 'NAME_MISMATCH', reason: expect.stringContaining('nombre') });
      const doc = await create(co, { ...base, documentNumber: '99999999', holderName: r.recipient!.fullName });
      expect(doc.verification).toMatchObject({ status: 'FAILED', reasonCode: 'DOCUMENT_MISMATCH' });
      const unknown = await create(co, { ...base, brebKey: { type: 'PHONE', value: '3009999999' }, documentNumber: '12345678', holderName: 'Nadie' });
      expect(unknown.verification).toMatchObject({ status: 'FAILED', reasonCode: 'KEY_NOT_FOUND', reason: expect.stringContaining('no está registrada') });
      await expectEvents(unknown.id, ['counterparty.verification_failed:FAILED']);
    });

    it('a directory that is down leaves it PENDING; the sweeper verifies it when the directory is back', async () => {
      const co = await newCompany(h);
      const r = await brebHolder(co, '3001234569');
      await setFaults(h, { directory: 'down' });
      try {
        const c = await create(co, {
          name: 'Y',
          brebKey: { type: 'PHONE', value: '3001234569' },
          documentTypeId: 1,
          documentNumber: r.recipient!.idValue,
          holderName: r.recipient!.fullName,
        });
        expect(c.verification!.status).toBe('PENDING');
        await setFaults(h, { directory: 'up' });
        await waitForStatus(co, c.id, ['VERIFIED']);
      } finally {
        await setFaults(h, { directory: 'up' });
      }
    });
  });

  describe('ACH (prenote)', () => {
    it('is PENDING at creation, then VERIFIED by the signed prenote callback; the account number is never stored in clear', async () => {
      const co = await newCompany(h);
      const n = accountNumber();
      const c = await create(co, { name: 'Nómina Ana', bankAccount: account(n), tags: ['employee'] });
      expect(c).toMatchObject({
        rail: 'ACH',
        bankAccount: { bankId: 1, bankName: 'Bancolombia', accountTypeId: 20, accountNumberMasked: `****${n.slice(-4)}` },
        documentTypeId: 1,
        documentNumber: '1020304050',
        holderName: 'Ana María Pérez Gómez',
        verification: { status: 'PENDING', method: 'PRENOTE' },
      });
      const r = await row(c.id);
      expect(JSON.stringify(r)).not.toContain(n);
      expect(r.account_number_masked).toBe(`****${n.slice(-4)}`);
      expect(r.prenote_id).toMatch(/^pn_[0-9a-f]{24}$/);
      const done = await waitForStatus(co, c.id, ['VERIFIED']);
      expect(h.receiver.received.some((x) => x.body.includes(String(r.prenote_id)) && x.status === 200)).toBe(true);
      expect(done.verification!.decidedAt).toBeInstanceOf(Date);
      await expectEvents(c.id, ['counterparty.verified:VERIFIED']);
      const history = await h.transfer!.db.query<{ event: string; to_status: string }>(
        'select event, to_status from transfer.counterparty_history where counterparty_id = ? order by seq',
        [c.id],
      );
      expect(history.map((x) => `${x.event}:${x.to_status}`)).toEqual(['created:UNVERIFIED', 'verify:PENDING', 'verified:VERIFIED']);
    });

    it("a prenote the rail rejects → FAILED with the rail's code and reason", async () => {
      const co = await newCompany(h);
      const n = accountNumber();
      await prenoteBehaviour(n, { delayMs: 50, rejectionRate: 1, reasonCode: 'R16' });
      const c = await create(co, { name: 'Bloqueada', bankAccount: account(n) });
      const failed = await waitForStatus(co, c.id, ['FAILED']);
      expect(failed.verification).toMatchObject({ status: 'FAILED', reasonCode: 'R16', reason: 'Cuenta bloqueada' });
      await expectEvents(c.id, ['counterparty.verification_failed:FAILED']);
    });

    it('a change of account resets it to PENDING with a new prenote; the late callback of the old prenote is ignored', async () => {
      const co = await newCompany(h);
      const slow = accountNumber();
      await prenoteBehaviour(slow, { delayMs: 600_000, rejectionRate: 0 });
      const c = await create(co, { name: 'Cambia', bankAccount: account(slow) });
      const oldPrenote = String((await row(c.id)).prenote_id);
      const changed = await h.client.updateCounterparty(
        transferV1.UpdateCounterpartyRequest.fromPartial({ id: c.id, bankAccount: account(accountNumber()) }),
        ctxOf(co.id),
      );
      expect(changed.verification!.status).toBe('PENDING');
      expect(changed.version).toBeGreaterThan(c.version);
      const newPrenote = String((await row(c.id)).prenote_id);
      expect(newPrenote).not.toBe(oldPrenote);
      await waitForStatus(co, c.id, ['VERIFIED']);
      // The old prenote is now rejected at the rail, and its callback delivered: acknowledged, ignored.
      const before = h.receiver.received.length;
      const forced = await fetch(`${h.sandbox.url}/sandbox/ach/prenotes/${oldPrenote}/reject`, {
        method: 'POST',
        headers: { 'content-type': 'application/json' },
        body: JSON.stringify({ reasonCode: 'R02' }),
      });
      expect(forced.status).toBe(200);
      const deadline = Date.now() + 5_000;
      while (!h.receiver.received.slice(before).some((x) => x.body.includes(oldPrenote)) && Date.now() < deadline) await new Promise((r) => setTimeout(r, 50));
      expect(h.receiver.received.slice(before).find((x) => x.body.includes(oldPrenote))?.status).toBe(200);
      const after = await get(co, c.id);
      expect(after.verification).toMatchObject({ status: 'VERIFIED' });
      expect(after.verification!.reasonCode).toBeUndefined();
      expect((await row(c.id)).prenote_id).toBe(newPrenote);
      await expectEvents(c.id, ['counterparty.verified:VERIFIED']);
    });

    it('a prenote submitted before the service stopped, its callback held back, is finished by the sweeper after a restart', async () => {
      const co = await newCompany(h);
      await setFaults(h, { callbacks: 'down' });
      try {
        const c = await create(co, { name: 'Reinicio', bankAccount: account(accountNumber()) });
        const r = await row(c.id);
        expect(r.prenote_submitted_at).not.toBeNull();
        await h.stopTransferInstances();
        const deadline = Date.now() + 5_000;
        while ((await sandboxPrenote(String(r.prenote_id))).status === 'PENDING' && Date.now() < deadline) await new Promise((x) => setTimeout(x, 50));
        await h.startTransferInstance();
        await waitForStatus(co, c.id, ['VERIFIED']);
      } finally {
        await setFaults(h, { callbacks: 'up' });
      }
    });

    it('a prenote the rail could not take before the service stopped is submitted by the sweeper after a restart', async () => {
      const co = await newCompany(h);
      await setFaults(h, { achRail: 'down' });
      let id: string;
      try {
        const c = await create(co, { name: 'Sin enviar', bankAccount: account(accountNumber()) });
        id = c.id;
        expect(c.verification!.status).toBe('PENDING');
        expect((await row(c.id)).prenote_submitted_at).toBeNull();
        await h.stopTransferInstances();
      } finally {
        await setFaults(h, { achRail: 'up' });
      }
      await h.startTransferInstance();
      await waitForStatus(co, id, ['VERIFIED']);
      expect((await row(id)).prenote_submitted_at).not.toBeNull();
    });
  });

  describe('the resource', () => {
    const brebReq = async (co: CompanySetup, extra: Partial<transferV1.CreateCounterpartyRequest> = {}) => {
      const r = await brebHolder(co, '3001112233');
      return {
        name: 'Llave',
        brebKey: { type: 'PHONE', value: '3001112233' },
        documentTypeId: 1,
        documentNumber: r.recipient!.idValue,
        holderName: r.recipient!.fullName,
        ...extra,
      };
    };

    it('the same idempotency key and hash answer the same counterparty; another hash → IDEMPOTENCY_KEY_REUSED', async () => {
      const co = await newCompany(h);
      const req = await brebReq(co, { idempotencyKey: `k-${randomUUID()}`, requestHash: 'hash-1' });
      const first = await create(co, req);
      const again = await create(co, req);
      expect(again.id).toBe(first.id);
      expect((await failure(create(co, { ...req, requestHash: 'hash-2', name: 'Otro' }))).code).toBe('IDEMPOTENCY_KEY_REUSED');
      const n = await h.transfer!.db.query<{ n: number }>('select count(*)::int as n from transfer.counterparties where company_id = ?', [co.id]);
      expect(n[0]!.n).toBe(1);
    });

    it('lists newest first, filtered by tag, status and rail, in cursor pages', async () => {
      const co = await newCompany(h);
      const ids: string[] = [];
      for (let i = 0; i < 3; i++) ids.push((await create(co, await brebReq(co, { name: `P${i}`, tags: ['supplier'] }))).id);
      ids.push((await create(co, await brebReq(co, { name: 'Mal', holderName: 'Nadie Conocido', tags: ['employee'] }))).id);
      const page1 = await h.client.listCounterparties(transferV1.ListCounterpartiesRequest.fromPartial({ limit: 2 }), ctxOf(co.id));
      expect(page1.items.map((x) => x.id)).toEqual([ids[3], ids[2]]);
      const page2 = await h.client.listCounterparties(transferV1.ListCounterpartiesRequest.fromPartial({ limit: 2, cursor: page1.nextCursor! }), ctxOf(co.id));
      expect(page2.items.map((x) => x.id)).toEqual([ids[1], ids[0]]);
      expect(page2.nextCursor).toBeUndefined();
      const list = (q: Partial<transferV1.ListCounterpartiesRequest>) =>
        h.client.listCounterparties(transferV1.ListCounterpartiesRequest.fromPartial(q), ctxOf(co.id)).then((r) => r.items.map((x) => x.id));
      expect(await list({ tag: 'supplier' })).toEqual([ids[2], ids[1], ids[0]]);
      expect(await list({ status: 'FAILED' })).toEqual([ids[3]]);
      expect(await list({ rail: 'ACH' })).toEqual([]);
      expect(await list({ tag: 'employee', status: 'VERIFIED' })).toEqual([]);
      expect((await failure(list({ status: 'MAYBE', rail: 'SWIFT', tag: 'Not A Tag' }))).details!.fields).toHaveLength(3);
    });

    it('a change of tags or name only keeps the verification; a new holder re-verifies', async () => {
      const co = await newCompany(h);
      const c = await create(co, await brebReq(co, { tags: ['a'] }));
      expect(c.verification!.status).toBe('VERIFIED');
      const tagged = await h.client.updateCounterparty(
        transferV1.UpdateCounterpartyRequest.fromPartial({ id: c.id, name: 'Nuevo nombre', replaceTags: true, tags: ['b', 'c', 'b'] }),
        ctxOf(co.id),
      );
      expect(tagged).toMatchObject({ name: 'Nuevo nombre', tags: ['b', 'c'], verification: { status: 'VERIFIED', decidedAt: c.verification!.decidedAt } });
      expect(tagged.version).toBe(c.version + 1);
      const renamed = await h.client.updateCounterparty(
        transferV1.UpdateCounterpartyRequest.fromPartial({ id: c.id, holderName: 'Alguien Distinto' }),
        ctxOf(co.id),
      );
      expect(renamed.verification).toMatchObject({ status: 'FAILED', reasonCode: 'NAME_MISMATCH' });
      expect(renamed.tags).toEqual(['b', 'c']);
    });

    it('verify again: from FAILED or VERIFIED a new attempt; while PENDING COUNTERPARTY_VERIFICATION_IN_PROGRESS', async () => {
      const co = await newCompany(h);
      const c = await create(co, await brebReq(co));
      const again = await h.client.verifyCounterparty({ id: c.id }, ctxOf(co.id));
      expect(again.verification!.status).toBe('VERIFIED');
      expect(again.version).toBe(c.version + 2);
      const slow = accountNumber();
      await prenoteBehaviour(slow, { delayMs: 600_000, rejectionRate: 0 });
      const ach = await create(co, { name: 'Lenta', bankAccount: account(slow) });
      expect((await failure(h.client.verifyCounterparty({ id: ach.id }, ctxOf(co.id)))).code).toBe('COUNTERPARTY_VERIFICATION_IN_PROGRESS');
    });

    it('delete is soft and answers the deleted counterparty; then get, update, verify and delete → COUNTERPARTY_NOT_FOUND', async () => {
      const co = await newCompany(h);
      const c = await create(co, await brebReq(co));
      const deleted = await h.client.deleteCounterparty({ id: c.id }, ctxOf(co.id));
      expect(deleted.id).toBe(c.id);
      expect((await row(c.id)).deleted_at).not.toBeNull();
      for (const call of [
        () => get(co, c.id),
        () => h.client.deleteCounterparty({ id: c.id }, ctxOf(co.id)),
        () => h.client.verifyCounterparty({ id: c.id }, ctxOf(co.id)),
        () => h.client.updateCounterparty(transferV1.UpdateCounterpartyRequest.fromPartial({ id: c.id, name: 'x' }), ctxOf(co.id)),
      ]) {
        expect((await failure(call())).code).toBe('COUNTERPARTY_NOT_FOUND');
      }
    });

    it("another company's, an unknown or a malformed id → COUNTERPARTY_NOT_FOUND", async () => {
      const co = await newCompany(h);
      const other = await newCompany(h);
      const c = await create(co, await brebReq(co));
      for (const id of [c.id, 'cpty_aaaaaaaaaaaaaaaaaaaaaaaa', 'nope', '', 'x'.repeat(10_000)]) {
        expect((await failure(get(other, id))).code).toBe('COUNTERPARTY_NOT_FOUND');
        expect((await failure(h.client.deleteCounterparty({ id }, ctxOf(other.id)))).code).toBe('COUNTERPARTY_NOT_FOUND');
      }
      expect((await h.client.listCounterparties(transferV1.ListCounterpartiesRequest.fromPartial({}), ctxOf(other.id))).items).toEqual([]);
      expect((await get(co, c.id)).id).toBe(c.id);
    });

    it('bad input: every problem at once; huge values; wrong types', async () => {
      const co = await newCompany(h);
      const e = await failure(
        create(co, {
          name: 'x'.repeat(121),
          brebKey: { type: 'PHONE', value: '12' },
          tags: ['Bad Tag', 'ok', ...Array.from({ length: 11 }, (_, i) => `t${i}`)],
        }),
      );
      expect(e.code).toBe('INVALID_REQUEST');
      expect((e.details!.fields as Array<{ path: string }>).map((f) => f.path).sort()).toEqual(
        ['brebKey.value', 'documentNumber', 'documentTypeId', 'holderName', 'name', 'tags', 'tags[0]'].sort(),
      );
      const both = await failure(create(co, { name: 'A', brebKey: { type: 'PHONE', value: '3001112233' }, bankAccount: account('12345678') }));
      expect((both.details!.fields as Array<{ path: string }>).map((f) => f.path)).toEqual(['destination']);
      const ach = await failure(
        create(co, {
          name: '',
          bankAccount: account('12ab', { accountTypeId: 99, documentTypeId: 3, documentNumber: 'x', holderFirstName: '', holderLastName: 'y'.repeat(100_000) }),
          documentNumber: '123',
        }),
      );
      expect((ach.details!.fields as Array<{ path: string }>).map((f) => f.path).sort()).toEqual(
        [
          'name',
          'documentNumber',
          'bankAccount.accountTypeId',
          'bankAccount.accountNumber',
          'bankAccount.documentTypeId',
          'bankAccount.documentNumber',
          'bankAccount.holderFirstName',
          'bankAccount.holderLastName',
        ].sort(),
      );
      expect((await failure(create(co, { name: 'sin destino' }))).code).toBe('INVALID_REQUEST');
      expect((await failure(create(co, { name: 'n'.repeat(1_000_000), bankAccount: account('123456789') }))).code).toBe('INVALID_REQUEST');
      // Wrong types on the wire: a string where an int32 goes does not decode into a counterparty.
      const wrong = await failure(
        h.client.createCounterparty({ name: 'A', tags: [42 as unknown as string], requestHash: 'h' } as transferV1.CreateCounterpartyRequest, ctxOf(co.id)),
      );
      expect(wrong).toBeInstanceOf(Error);
      const n = await h.transfer!.db.query<{ n: number }>('select count(*)::int as n from transfer.counterparties where company_id = ?', [co.id]);
      expect(n[0]!.n).toBe(0);
    });
  });
});
