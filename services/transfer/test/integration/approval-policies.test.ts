import { randomUUID } from 'node:crypto';
import { policyEventsV1, transferV1 } from '@wallet/proto';
import { isColombianHoliday, bogotaClock } from '../../src/domain/approval-policy.js';
import { approvalViolations } from './saga-invariants.js';
import {
  MovementStatus,
  NATS_URL,
  Rail,
  achSend,
  brebSend,
  ctxOf,
  expectLedgerOk,
  failure,
  newCompany,
  send,
  startHarness,
  userCtxOf,
  waitForState,
  wallet,
  type CompanySetup,
  type Harness,
} from './harness.js';

/**
 * Approval policies (docs/policies.md) through the real gRPC server, Postgres, NATS, the ledger and
 * the sandbox: a change needs the quorum of ADMINs (and is evented); each rule kind decides a send as
 * written, the decision recorded with the transfer; a rule's roles are the only ones whose signatures
 * count; a refusal reserves nothing.
 */
describe('approval policies', () => {
  let h: Harness;
  beforeAll(async () => {
    h = await startHarness({ transferEnv: { POLICY_CHANGE_DELAY_SECONDS: '0', APPROVAL_TTL_SECONDS: '3600' } });
  }, 60_000);
  afterAll(async () => {
    await h?.stop();
  });
  afterEach(async () => {
    await expectLedgerOk(h);
    expect(await approvalViolations(h.tdb.url)).toEqual([]);
  });

  const user = (role: string) => {
    const userId = randomUUID();
    return { userId, email: `${role.toLowerCase()}-${userId.slice(0, 6)}@empresa.co`, role };
  };
  const propose = (co: CompanySetup, doc: unknown, by = user('ADMIN'), note?: string) =>
    h.client.proposeApprovalPolicy({ documentJson: JSON.stringify(doc), precheck: false, ...(note ? { note } : {}) }, userCtxOf(co.id, by));
  const signPolicy = (co: CompanySetup, id: string, by = user('ADMIN')) => h.client.signApprovalPolicy({ id, precheck: false }, userCtxOf(co.id, by));
  /** Proposed by one ADMIN and signed by another: in force at once (no delay in this harness). */
  async function adopt(co: CompanySetup, doc: unknown): Promise<transferV1.ApprovalPolicyVersion> {
    const p = await propose(co, doc);
    let v = p;
    for (let i = 1; i < p.requiredSignatures; i++) v = await signPolicy(co, p.id);
    expect(v.status).toBe('APPROVED');
    return v;
  }
  const ALLOW = { action: 'ALLOW' };
  const TWO = { action: 'REQUIRE_APPROVALS', approvals: 2 };

  describe('changing the policy', () => {
    it('needs the quorum of ADMINs (never fewer than two), one proposal at a time, and is evented', async () => {
      const co = await newCompany(h, { breb: 100_000n });
      const doc = {
        rules: [{ id: 'big', description: 'Dos firmas desde 50 millones', when: { amountAtLeastCents: 5_000_000_000 }, then: TWO }],
        otherwise: ALLOW,
      };
      const alice = user('ADMIN');
      const p = await propose(co, doc, alice, 'Política del comité financiero');
      expect(p).toMatchObject({ version: 1, status: 'PROPOSED', requiredSignatures: 2, proposedBy: alice.email, note: 'Política del comité financiero' });
      expect(p.id).toMatch(/^apol_[a-z0-9]{24}$/);
      expect(JSON.parse(p.documentJson)).toEqual(doc);
      expect(p.signatures.map((s) => s.email)).toEqual([alice.email]);

      // Nothing decides yet: the threshold (none) does.
      expect((await h.client.getApprovalPolicy({}, ctxOf(co.id))).inForce).toBeUndefined();
      expect((await h.client.getApprovalPolicy({}, ctxOf(co.id))).proposed?.id).toBe(p.id);
      expect((await failure(propose(co, doc))).code).toBe('POLICY_CHANGE_PENDING');
      expect((await failure(signPolicy(co, p.id, alice))).code).toBe('ALREADY_SIGNED');
      expect((await failure(signPolicy(co, p.id, user('OPERATOR')))).code).toBe('INSUFFICIENT_ROLE');
      expect((await failure(propose(co, doc, user('OPERATOR')))).code).toBe('INSUFFICIENT_ROLE');
      // An API key is nobody who can sign.
      expect((await failure(h.client.signApprovalPolicy({ id: p.id, precheck: false }, ctxOf(co.id)))).code).toBe('INSUFFICIENT_ROLE');
      // Another company's version, or a malformed id, is not found.
      const other = await newCompany(h);
      expect((await failure(signPolicy(other, p.id))).code).toBe('POLICY_VERSION_NOT_FOUND');
      expect((await failure(signPolicy(co, 'apol_x'))).code).toBe('POLICY_VERSION_NOT_FOUND');
      // A precheck signs nothing.
      const bob = user('ADMIN');
      await h.client.signApprovalPolicy({ id: p.id, precheck: true }, userCtxOf(co.id, bob));
      expect((await h.client.getApprovalPolicy({}, ctxOf(co.id))).proposed?.signatures).toHaveLength(1);

      const approved = await signPolicy(co, p.id, bob);
      expect(approved).toMatchObject({ status: 'APPROVED', decidedBy: bob.email });
      expect(approved.effectiveAt).toBeDefined();
      expect((await failure(signPolicy(co, p.id))).code).toBe('POLICY_CHANGE_NOT_PENDING');
      const state = await h.client.getApprovalPolicy({}, ctxOf(co.id));
      expect(state).toMatchObject({ changeQuorum: 2, changeDelaySeconds: 0 });
      expect(state.inForce?.version).toBe(1);
      expect(state.proposed).toBeUndefined();

      const events = await policyEvents();
      const mine = events.filter((e) => e.companyId === co.id);
      expect(mine).toEqual([expect.objectContaining({ policyId: p.id, version: 1, previousVersion: 0, signedBy: [alice.email, bob.email] })]);
      expect(JSON.parse(mine[0]!.documentJson)).toEqual(doc);
      expect(mine[0]!.effectiveAt).toEqual(approved.effectiveAt);
      expect((await h.client.listApprovalPolicyVersions({ limit: 10 }, ctxOf(co.id))).items.map((v) => [v.version, v.status])).toEqual([[1, 'APPROVED']]);
    });

    it("a company's threshold is its change quorum; a proposal may be cancelled by any ADMIN", async () => {
      const co = await newCompany(h, { multiSig: 3 });
      const p = await propose(co, { rules: [], otherwise: ALLOW });
      expect(p.requiredSignatures).toBe(3);
      expect((await signPolicy(co, p.id)).status).toBe('PROPOSED');
      const cancelled = await h.client.cancelApprovalPolicy({ id: p.id, precheck: false }, userCtxOf(co.id, user('ADMIN')));
      expect(cancelled.status).toBe('CANCELLED');
      expect((await failure(signPolicy(co, p.id))).code).toBe('POLICY_CHANGE_NOT_PENDING');
      // The next proposal is the next version.
      expect((await propose(co, { rules: [], otherwise: ALLOW })).version).toBe(2);
    });

    it('refuses a document it cannot decide with, naming every problem', async () => {
      const co = await newCompany(h);
      const problems = async (doc: string) => {
        const e = await failure(h.client.proposeApprovalPolicy({ documentJson: doc, precheck: false }, userCtxOf(co.id, user('ADMIN'))));
        expect(e.code).toBe('INVALID_REQUEST');
        return (e.details as { fields: Array<{ path: string }> }).fields.map((f) => f.path);
      };
      expect(await problems('{"rules": [')).toEqual(['policy']);
      expect(await problems(JSON.stringify({ rules: [{ id: 'a', when: { amountAtLeastCents: -1 }, then: { action: 'REFUSE', code: 'x' } }] }))).toEqual([
        'policy.rules.0.when.amountAtLeastCents',
        'policy.rules.0.then.code',
        'policy.otherwise',
      ]);
      expect((await h.client.getApprovalPolicy({}, ctxOf(co.id))).proposed).toBeUndefined();
    });
  });

  describe('sends decided by the policy in force', () => {
    it('amount: the rule that matches asks for its approvals; below it, `otherwise` allows; the decision is recorded', async () => {
      const co = await newCompany(h, { breb: 1_000_000n });
      const v = await adopt(co, { rules: [{ id: 'big', when: { amountAtLeastCents: 50_000 }, then: TWO }], otherwise: ALLOW });
      const big = (await send(h, co, await brebSend(h, co, '3004440001', 60_000n))).transfer!;
      expect(big).toMatchObject({ status: MovementStatus.AWAITING_APPROVAL, threshold: 2, approvalRoles: ['ADMIN', 'OPERATOR'] });
      expect(big.policyDecision).toEqual({ policyVersion: v.version, ruleId: 'big', action: 'REQUIRE_APPROVALS', approvals: 2, roles: ['ADMIN', 'OPERATOR'] });
      const small = (await send(h, co, await brebSend(h, co, '3004440001', 10_000n))).transfer!;
      expect(small.status).toBe(MovementStatus.PENDING);
      expect(small.policyDecision).toEqual({ policyVersion: v.version, action: 'ALLOW', approvals: 0, roles: [] });
      // The detail read back carries the same decision.
      expect((await h.ledgerClient.getMovement({ id: small.id }, ctxOf(co.id))).status).not.toBe(MovementStatus.AWAITING_APPROVAL);
    });

    it('refuse: 422 POLICY_REFUSED naming the rule, its code and message; nothing reserved, nothing recorded', async () => {
      const co = await newCompany(h, { ach: 1_000_000n });
      const v = await adopt(co, {
        rules: [{ id: 'no-ach', when: { rails: ['ACH'] }, then: { action: 'REFUSE', code: 'ACH_BLOCKED', message: 'Los pagos ACH están suspendidos.' } }],
        otherwise: ALLOW,
      });
      const reference = `ref-${randomUUID()}`;
      const e = await failure(send(h, co, achSend(co, 10_000n, { reference })));
      expect(e.code).toBe('POLICY_REFUSED');
      expect(e.details).toEqual({ policyVersion: v.version, ruleId: 'no-ach', code: 'ACH_BLOCKED', message: 'Los pagos ACH están suspendidos.' });
      expect(await wallet(h, co.id, Rail.ACH)).toEqual({ available: 1_000_000n, pending: 0n });
      expect(await h.transfer!.db.query('select id from transfer.transfers where company_id = ?', [co.id])).toEqual([]);
      // The reference was not kept by the refusal: a retry under a policy that allows runs.
      await adopt(co, { rules: [], otherwise: ALLOW });
      expect((await send(h, co, achSend(co, 10_000n, { reference }))).transfer!.status).toBe(MovementStatus.PENDING);
    });

    it("roles: an ADMIN-only approval does not count an OPERATOR's signature; an ADMIN's dispatches it", async () => {
      const co = await newCompany(h, { breb: 100_000n });
      await adopt(co, { rules: [], otherwise: { action: 'REQUIRE_APPROVALS', approvals: 1, roles: ['ADMIN'] } });
      const t = (await send(h, co, await brebSend(h, co, '3004440001', 10_000n))).transfer!;
      expect(t).toMatchObject({ status: MovementStatus.AWAITING_APPROVAL, threshold: 1, approvalRoles: ['ADMIN'] });
      const signApproval = (by: ReturnType<typeof user>) => h.client.signApproval({ approvalId: t.approvalId!, precheck: false }, userCtxOf(co.id, by));
      expect((await failure(signApproval(user('OPERATOR')))).code).toBe('INSUFFICIENT_ROLE');
      expect((await signApproval(user('ADMIN'))).status).toBe('APPROVED');
      expect(await waitForState(h, t.id, ['COMPLETED'])).toBe('COMPLETED');
    });

    it('first payment to a payee: waits for approvals until a payment to it has completed', async () => {
      const co = await newCompany(h, { breb: 1_000_000n });
      await adopt(co, { rules: [{ id: 'new-payee', when: { firstPayment: true }, then: TWO }], otherwise: ALLOW });
      const key = `300${Math.floor(Math.random() * 1e7)
        .toString()
        .padStart(7, '0')}`;
      const first = (await send(h, co, await brebSend(h, co, key, 10_000n))).transfer!;
      expect(first.policyDecision?.ruleId).toBe('new-payee');
      // A second send while the first waits is still a first payment (a pending one proves nothing).
      const second = (await send(h, co, await brebSend(h, co, key, 10_000n))).transfer!;
      expect(second.policyDecision?.ruleId).toBe('new-payee');
      for (const by of [user('ADMIN'), user('OPERATOR')]) await h.client.signApproval({ approvalId: first.approvalId!, precheck: false }, userCtxOf(co.id, by));
      expect(await waitForState(h, first.id, ['COMPLETED'])).toBe('COMPLETED');
      const third = (await send(h, co, await brebSend(h, co, key, 10_000n))).transfer!;
      expect(third.policyDecision).toMatchObject({ ruleId: undefined, action: 'ALLOW' });
      expect(third.status).toBe(MovementStatus.PENDING);
    });

    it('time of day, day of week and holidays in Bogotá', async () => {
      const co = await newCompany(h, { breb: 1_000_000n });
      const now = bogotaClock(new Date());
      const hhmm = (m: number) =>
        `${String(Math.floor((((m % 1440) + 1440) % 1440) / 60)).padStart(2, '0')}:${String((((m % 1440) + 1440) % 1440) % 60).padStart(2, '0')}`;
      const refuse = (code: string) => ({ action: 'REFUSE', code });
      await adopt(co, {
        rules: [
          { id: 'not-now', when: { timeOfDay: { from: hhmm(now.minute + 60), to: hhmm(now.minute + 120) } }, then: refuse('LATER') },
          {
            id: 'other-days',
            when: { daysOfWeek: ['MON', 'TUE', 'WED', 'THU', 'FRI', 'SAT', 'SUN'].filter((d) => d !== now.weekday) },
            then: refuse('OTHER_DAY'),
          },
          { id: 'holidays', when: { holiday: !isColombianHoliday(now.date) }, then: refuse('HOLIDAY_RULE') },
          { id: 'around-now', when: { timeOfDay: { from: hhmm(now.minute - 30), to: hhmm(now.minute + 30) }, daysOfWeek: [now.weekday] }, then: refuse('NOW') },
        ],
        otherwise: ALLOW,
      });
      const e = await failure(send(h, co, await brebSend(h, co, '3004440001', 10_000n)));
      expect(e.details).toMatchObject({ ruleId: 'around-now', code: 'NOW' });
    });

    it("cumulative today: counts the day's accepted sends (not the refused ones) and asks for approvals past the amount", async () => {
      const co = await newCompany(h, { breb: 100_000n });
      await adopt(co, { rules: [{ id: 'daily', when: { cumulativeTodayAtLeastCents: 100_000 }, then: TWO }], otherwise: ALLOW });
      const a = (await send(h, co, await brebSend(h, co, '3004440001', 60_000n))).transfer!;
      expect(a.policyDecision?.action).toBe('ALLOW');
      // 50,000 more than the 40,000 left: refused for the balance, so it does not count.
      expect((await failure(send(h, co, await brebSend(h, co, '3004440001', 50_000n)))).code).toBe('INSUFFICIENT_BALANCE');
      const b = (await send(h, co, await brebSend(h, co, '3004440001', 30_000n))).transfer!;
      expect(b.policyDecision?.action).toBe('ALLOW'); // 90,000 today
      const c = (await send(h, co, await brebSend(h, co, '3004440001', 10_000n))).transfer!;
      expect(c.policyDecision).toMatchObject({ ruleId: 'daily', action: 'REQUIRE_APPROVALS' }); // 100,000
      expect(c.status).toBe(MovementStatus.AWAITING_APPROVAL);
    });

    it('quotes explain the rule that applies and the approvals it needs, reserving and counting nothing', async () => {
      const co = await newCompany(h, { breb: 1_000_000n });
      const v = await adopt(co, {
        rules: [
          { id: 'daily', when: { cumulativeTodayAtLeastCents: 100_000 }, then: { action: 'REQUIRE_APPROVALS', approvals: 3, roles: ['ADMIN'] } },
          { id: 'new-payee', when: { firstPayment: true, amountAtLeastCents: 50_000 }, then: TWO },
        ],
        otherwise: ALLOW,
      });
      const quote = (amount: bigint, extra: Partial<transferV1.QuoteRequest> = {}) =>
        h.client.quote(transferV1.QuoteRequest.fromPartial({ rail: Rail.BREB, amount, keyValue: '3004440001', keyType: 'PHONE', ...extra }), ctxOf(co.id));
      expect((await quote(10_000n)).policyDecision).toEqual({ policyVersion: v.version, action: 'ALLOW', approvals: 0, roles: [] });
      expect((await quote(60_000n)).policyDecision).toMatchObject({ ruleId: 'new-payee', action: 'REQUIRE_APPROVALS', approvals: 2 });
      expect((await quote(100_000n)).policyDecision).toMatchObject({ ruleId: 'daily', approvals: 3, roles: ['ADMIN'] });
      // Quoting counted nothing: a send of 60,000 is still below the day's 100,000.
      await quote(100_000n);
      const sent = (await send(h, co, await brebSend(h, co, '3004440001', 60_000n))).transfer!;
      expect(sent.policyDecision).toMatchObject({ ruleId: 'new-payee' });
      expect((await quote(40_000n)).policyDecision).toMatchObject({ ruleId: 'daily' });
      // Another company's counterparty is not found.
      expect((await failure(quote(1_000n, { counterpartyId: 'cpty_000000000000000000000000' }))).code).toBe('COUNTERPARTY_NOT_FOUND');
    });

    it('each send records the version that decided it: a new version decides the sends after it', async () => {
      const co = await newCompany(h, { breb: 100_000n, multiSig: 2 });
      // No policy: the threshold decides, as version 0.
      const before = (await send(h, co, await brebSend(h, co, '3004440001', 1_000n))).transfer!;
      expect(before.policyDecision).toMatchObject({ policyVersion: 0, action: 'REQUIRE_APPROVALS', approvals: 2 });
      const v1 = await adopt(co, { rules: [], otherwise: ALLOW });
      const after = (await send(h, co, await brebSend(h, co, '3004440001', 1_000n))).transfer!;
      expect(after.policyDecision).toMatchObject({ policyVersion: v1.version, action: 'ALLOW' });
      const v2 = await adopt(co, { rules: [], otherwise: TWO });
      expect(v2.version).toBe(v1.version + 1);
      expect((await send(h, co, await brebSend(h, co, '3004440001', 1_000n))).transfer!.policyDecision).toMatchObject({ policyVersion: v2.version });
    });
  });

  async function policyEvents(): Promise<policyEventsV1.ApprovalPolicyChanged[]> {
    const { connect } = await import('@nats-io/transport-node');
    const { jetstreamManager } = await import('@nats-io/jetstream');
    const nc = await connect({ servers: NATS_URL });
    try {
      const jsm = await jetstreamManager(nc);
      const stream = `${h.namespace.toUpperCase()}_COMPANIES`;
      const deadline = Date.now() + 5_000;
      for (;;) {
        const info = await jsm.streams.info(stream);
        const out: policyEventsV1.ApprovalPolicyChanged[] = [];
        for (let seq = info.state.first_seq; seq <= info.state.last_seq && info.state.messages > 0; seq++) {
          const m = await jsm.streams.getMessage(stream, { seq });
          if (m && m.subject.endsWith('company.policy_changed')) out.push(policyEventsV1.ApprovalPolicyChanged.fromJSON(m.json()));
        }
        if (out.length > 0 || Date.now() > deadline) return out;
        await new Promise((r) => setTimeout(r, 50));
      }
    } finally {
      await nc.close();
    }
  }
});

/** A change takes effect after its delay: until then the version before it decides. */
describe('approval policies: the change delay', () => {
  let h: Harness;
  beforeAll(async () => {
    h = await startHarness({ transferEnv: { POLICY_CHANGE_DELAY_SECONDS: '2', POLICY_CACHE_SECONDS: '30' } });
  }, 60_000);
  afterAll(async () => {
    await h?.stop();
  });

  it('is scheduled, decides nothing before effectiveAt, and everything after', async () => {
    const co = await newCompany(h, { breb: 100_000n });
    const admin = () => ({ userId: randomUUID(), email: `${randomUUID().slice(0, 6)}@empresa.co`, role: 'ADMIN' });
    const doc = { rules: [], otherwise: { action: 'REQUIRE_APPROVALS', approvals: 2 } };
    const p = await h.client.proposeApprovalPolicy({ documentJson: JSON.stringify(doc), precheck: false }, userCtxOf(co.id, admin()));
    // A send first, so the replica holds the company's (empty) versions in memory.
    expect((await send(h, co, await brebSend(h, co, '3004440001', 1_000n))).transfer!.policyDecision).toMatchObject({ policyVersion: 0 });
    const v = await h.client.signApprovalPolicy({ id: p.id, precheck: false }, userCtxOf(co.id, admin()));
    expect(v.effectiveAt!.getTime() - v.decidedAt!.getTime()).toBe(2_000);
    const state = await h.client.getApprovalPolicy({}, ctxOf(co.id));
    expect(state.inForce).toBeUndefined();
    expect(state.scheduled.map((s) => s.version)).toEqual([1]);
    expect((await send(h, co, await brebSend(h, co, '3004440001', 1_000n))).transfer!.policyDecision).toMatchObject({ policyVersion: 0, action: 'ALLOW' });
    // Past effectiveAt (a known instant, not a guess), the new version decides.
    await new Promise((r) => setTimeout(r, Math.max(0, v.effectiveAt!.getTime() - Date.now()) + 50));
    const t = (await send(h, co, await brebSend(h, co, '3004440001', 1_000n))).transfer!;
    expect(t.policyDecision).toMatchObject({ policyVersion: 1, action: 'REQUIRE_APPROVALS' });
    expect((await h.client.getApprovalPolicy({}, ctxOf(co.id))).inForce?.version).toBe(1);
  });
});

/** Bulk payouts: each line decided at execution, the total as one payment, one approval for the batch (the strictest). */
describe('approval policies: bulk payouts', () => {
  let h: Harness;
  beforeAll(async () => {
    h = await startHarness({ transferEnv: { POLICY_CHANGE_DELAY_SECONDS: '0' } });
  }, 60_000);
  afterAll(async () => {
    await h?.stop();
  });
  afterEach(async () => {
    await expectLedgerOk(h);
    expect(await approvalViolations(h.tdb.url)).toEqual([]);
  });

  const admin = () => ({ userId: randomUUID(), email: `${randomUUID().slice(0, 6)}@empresa.co`, role: 'ADMIN' });
  async function adopt(co: CompanySetup, doc: unknown): Promise<void> {
    const p = await h.client.proposeApprovalPolicy({ documentJson: JSON.stringify(doc), precheck: false }, userCtxOf(co.id, admin()));
    expect((await h.client.signApprovalPolicy({ id: p.id, precheck: false }, userCtxOf(co.id, admin()))).status).toBe('APPROVED');
  }
  const item = (seq: number, s: transferV1.SendRequest) => transferV1.BatchItemInput.fromPartial({ seq, line: 0, send: { ...s, requestHash: '' } });
  async function validated(co: CompanySetup, items: transferV1.BatchItemInput[]) {
    const r = await h.client.createBatch(
      transferV1.CreateBatchRequest.fromPartial({ mode: 'VALID_ONLY', source: 'JSON', requestHash: randomUUID(), items }),
      ctxOf(co.id),
    );
    expect(r.batch!.state).toBe('VALIDATED');
    return r.batch!;
  }
  const POLICY = {
    rules: [
      { id: 'no-ach', when: { rails: ['ACH'] }, then: { action: 'REFUSE', code: 'ACH_BLOCKED' } },
      { id: 'huge-batch', when: { amountAtLeastCents: 1_000_000 }, then: { action: 'REFUSE', code: 'TOO_MUCH' } },
      { id: 'big-line', when: { amountAtLeastCents: 50_000 }, then: { action: 'REQUIRE_APPROVALS', approvals: 2, roles: ['ADMIN'] } },
    ],
    otherwise: { action: 'ALLOW' },
  };

  it('a refused line is refused alone, the batch waits for the strictest approval, each line records its decision', async () => {
    const co = await newCompany(h, { breb: 1_000_000n, ach: 1_000_000n });
    await adopt(co, POLICY);
    const b = await validated(co, [
      item(1, await brebSend(h, co, '3001112233', 10_000n)),
      item(2, await brebSend(h, co, '3002223344', 60_000n)),
      item(3, achSend(co, 5_000n)),
    ]);
    const executed = await h.client.executeBatch({ batchId: b.id }, ctxOf(co.id));
    expect(executed.state).toBe('AWAITING_APPROVAL');
    const items = (await h.client.listBatchItems({ batchId: b.id, limit: 100 }, ctxOf(co.id))).items;
    expect(items.map((i) => [i.seq, i.status, i.errorCode ?? null])).toEqual([
      [1, 'AWAITING_APPROVAL', null],
      [2, 'AWAITING_APPROVAL', null],
      [3, 'REJECTED', 'POLICY_REFUSED'],
    ]);
    expect(items[2]!.message).toContain('ACH_BLOCKED');
    const [approval] = await h.transfer!.db.query<{ threshold: number; roles: string[] }>(
      'select threshold, roles from transfer.approvals where batch_id = ?::uuid',
      [b.id],
    );
    expect(approval).toEqual({ threshold: 2, roles: ['ADMIN'] });
    const decisions = await h.transfer!.db.query<{ amount: string; d: { ruleId: string | null; action: string } }>(
      'select amount::text as amount, policy_decision as d from transfer.transfers where batch_id = ?::uuid order by amount',
      [b.id],
    );
    expect(decisions.map((r) => [r.amount, r.d.ruleId, r.d.action])).toEqual([
      ['10000', null, 'ALLOW'],
      ['60000', 'big-line', 'REQUIRE_APPROVALS'],
    ]);
    // An OPERATOR's signature does not count; two ADMINs' dispatch the batch.
    const sign = (s: ReturnType<typeof admin>) => h.client.signBatchApproval({ batchId: b.id, precheck: false }, userCtxOf(co.id, s));
    expect((await failure(sign({ ...admin(), role: 'OPERATOR' }))).code).toBe('INSUFFICIENT_ROLE');
    await sign(admin());
    expect((await sign(admin())).state).not.toBe('AWAITING_APPROVAL');
  });

  it('the validation report explains each line, the total and the approval the batch would wait for', async () => {
    const co = await newCompany(h, { breb: 1_000_000n, ach: 1_000_000n });
    await adopt(co, POLICY);
    const r = await h.client.createBatch(
      transferV1.CreateBatchRequest.fromPartial({
        mode: 'VALID_ONLY',
        source: 'JSON',
        requestHash: randomUUID(),
        items: [item(1, await brebSend(h, co, '3001112233', 10_000n)), item(2, await brebSend(h, co, '3002223344', 60_000n)), item(3, achSend(co, 5_000n))],
      }),
      ctxOf(co.id),
    );
    expect(r.results.map((x) => [x.seq, x.valid, x.policyDecision?.action, x.policyDecision?.ruleId])).toEqual([
      [1, true, 'ALLOW', undefined],
      [2, true, 'REQUIRE_APPROVALS', 'big-line'],
      [3, true, 'REFUSE', 'no-ach'],
    ]);
    // The accepted lines' total (70,000 on Bre-B) is itself a big payment.
    expect(r.totalPolicyDecision).toMatchObject({ action: 'REQUIRE_APPROVALS', ruleId: 'big-line' });
    expect(r.policyDecision).toMatchObject({ action: 'REQUIRE_APPROVALS', ruleId: 'big-line', approvals: 2, roles: ['ADMIN'] });
    // Nothing reserved by explaining.
    expect(await wallet(h, co.id, Rail.BREB)).toEqual({ available: 1_000_000n, pending: 0n });
  });

  it('a refused total refuses the execution: 422 POLICY_REFUSED, nothing reserved, the batch still VALIDATED', async () => {
    const co = await newCompany(h, { breb: 2_000_000n });
    await adopt(co, POLICY);
    // The 26 keys resolved one after another: 26 directory lookups at once, beside the rest of the
    // suite on 2 cores, outlasted the provider timeout (CI, 2026-11-30), and the test is not about them.
    const items = [item(1, await brebSend(h, co, '3001112233', 40_000n))];
    for (let i = 0; i < 25; i++) items.push(item(i + 2, await brebSend(h, co, `30011122${String(i).padStart(2, '0')}`, 40_000n)));
    const b = await validated(co, items);
    const e = await failure(h.client.executeBatch({ batchId: b.id }, ctxOf(co.id)));
    expect(e.code).toBe('POLICY_REFUSED');
    expect(e.details).toMatchObject({ ruleId: 'huge-batch', code: 'TOO_MUCH' });
    expect((await h.client.getBatch({ batchId: b.id }, ctxOf(co.id))).state).toBe('VALIDATED');
    expect(await wallet(h, co.id, Rail.BREB)).toEqual({ available: 2_000_000n, pending: 0n });
  });
});
