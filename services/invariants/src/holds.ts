import { OWED_HORIZON_SECONDS, Offenders, PAGE, companyScope, type CheckOptions, type CheckResult, type CheckSources } from './report.js';
import type { RailTransferStatus } from './rail.js';

type HoldStatus = 'none' | 'OPEN' | 'COMMITTED' | 'RELEASED';

/**
 * The hold each transfer state may have, in any snapshot of a live installation. The send saga
 * (services/transfer/src/domain/transfer-machine.ts) wins a transition before it moves money, so a
 * state is never "ahead" of its hold: an intermediate state (COMPLETING, RELEASING, EXPIRING,
 * ABANDONING) may have done its money step or not yet; every other state has exactly one answer.
 */
const LIVE_ALLOWED: Readonly<Record<string, readonly HoldStatus[]>> = {
  RECEIVED: ['none', 'OPEN'], // the reserve may be landing
  RESERVED: ['OPEN'],
  AWAITING_APPROVAL: ['OPEN'],
  EXECUTING: ['OPEN'],
  DISPATCHED: ['OPEN'],
  COMPLETING: ['OPEN', 'COMMITTED'],
  RELEASING: ['OPEN', 'RELEASED'],
  EXPIRING: ['OPEN', 'RELEASED'],
  ABANDONING: ['none', 'OPEN', 'RELEASED'],
  COMPLETED: ['COMMITTED'],
  FAILED: ['RELEASED'],
  EXPIRED: ['RELEASED'],
  REJECTED: ['none'], // refused, or abandoned before any reserve landed (its key is void)
};
/** With nobody mid-step (quiescent or settled), a money step is either not begun or closed: never done-but-unclosed. */
const SETTLED_ALLOWED: Readonly<Record<string, readonly HoldStatus[]>> = {
  ...LIVE_ALLOWED,
  COMPLETING: ['OPEN'],
  RELEASING: ['OPEN'],
  EXPIRING: ['OPEN'],
  ABANDONING: ['none', 'OPEN'],
};
const OWES_A_STEP = new Set(['COMPLETING', 'RELEASING', 'EXPIRING', 'ABANDONING']);
const RAIL_PAID_EXCUSE = 'RAIL_COMPLETED_AFTER_RELEASE';
const RAIL_FAILED_EXCUSE = 'RAIL_FAILED_AFTER_COMPLETION';

interface TransferRow {
  id: string;
  company_id: string;
  state: string;
  hold_id: string | null;
  idle_s: number;
}
interface KeyRow {
  key: string;
  kind: string;
  hold_id: string | null;
  hold_status: 'OPEN' | 'COMMITTED' | 'RELEASED' | null;
}

/**
 * holds: a live transfer ⇔ its hold is open; COMPLETED ⇔ hold committed ⇔ the rail paid it;
 * FAILED/EXPIRED ⇔ hold released; REJECTED ⇔ no reserve ever landed. An open hold belongs to a
 * transfer that may hold it. The rail's side: paid at the rail ⇒ COMPLETED (or an exception says
 * why not); a committed hold ⇒ paid at the rail; every transfer the rail received is known to us.
 */
export async function checkHolds(s: CheckSources, o: CheckOptions, limit: number): Promise<CheckResult> {
  const bad = new Offenders(limit);
  const notChecked: string[] = [];
  const quiet = o.settled === true || o.quiescent === true;
  const horizon = o.owedHorizonSeconds ?? OWED_HORIZON_SECONDS;
  const allowed = quiet ? SETTLED_ALLOWED : LIVE_ALLOWED;
  const byState = new Map<string, number>();
  const scope = companyScope(o, 2);

  // Money exceptions of transfers are few: read once. An open one parks its transfer for an
  // operator; a rail contradiction (any status) explains a disagreement with the rail for good.
  const exceptions = new Map<string, { kind: string; open: boolean }[]>();
  for (const e of await s.transfer.query<{ resource_id: string; kind: string; status: string }>(
    `select resource_id, kind, status from transfer.money_exceptions where status <> 'RESOLVED' or kind in ($1, $2)`,
    [RAIL_PAID_EXCUSE, RAIL_FAILED_EXCUSE],
  )) {
    const list = exceptions.get(e.resource_id) ?? [];
    list.push({ kind: e.kind, open: e.status !== 'RESOLVED' });
    exceptions.set(e.resource_id, list);
  }

  let transfers = 0;
  let after = '00000000-0000-0000-0000-000000000000';
  for (;;) {
    const page = await s.transfer.query<TransferRow>(
      `select id::text as id, company_id, state, hold_id::text as hold_id, extract(epoch from now() - updated_at)::int as idle_s from transfer.transfers
        where id > $1::uuid${scope.sql} order by id limit $2`,
      [after, PAGE, ...scope.params],
    );
    if (page.length === 0) break;
    after = page[page.length - 1]!.id;
    transfers += page.length;
    const keys = await s.ledger.query<KeyRow>(
      `select p.idempotency_key as key, p.kind, p.hold_id::text as hold_id, h.status as hold_status
         from ledger.postings p left join ledger.holds h on h.id = p.hold_id
        where p.idempotency_key = any($1::text[])`,
      [page.map((t) => `transfer:${t.id}:reserve`)],
    );
    const reserveOf = new Map(keys.map((k) => [k.key.slice('transfer:'.length, -':reserve'.length), k]));
    const rail = s.rail ? await s.rail.transfers(page.map((t) => t.id)) : undefined;

    for (const t of page) {
      byState.set(t.state, (byState.get(t.state) ?? 0) + 1);
      const key = reserveOf.get(t.id);
      const hold: HoldStatus = key?.kind === 'reserve' ? (key.hold_status ?? 'none') : 'none';
      const exc = exceptions.get(t.id) ?? [];
      const parked = exc.some((e) => e.open);
      const say = (what: string) =>
        bad.add(`transfer ${t.id} (company ${t.company_id}) ${t.state}: ${what} (hold ${hold}, reserve key ${key?.kind ?? 'unused'})`);

      if (t.hold_id && key?.hold_id && t.hold_id !== key.hold_id) say(`records hold ${t.hold_id} but its reserve made ${key.hold_id}`);
      const ok = allowed[t.state];
      if (!ok) say('unknown state');
      else if (!ok.includes(hold) && !(parked && OWES_A_STEP.has(t.state)))
        say(`has ${hold === 'none' ? 'no hold' : `a ${hold} hold`}; ${t.state} allows ${ok.map((h) => (h === 'none' ? 'no hold' : h)).join(' or ')}`);
      if (t.state === 'REJECTED' && key?.kind === 'reserve') say('was refused but its reserve landed');
      if (o.settled && OWES_A_STEP.has(t.state) && !parked) say('still owes its money step with nobody running');
      else if (OWES_A_STEP.has(t.state) && !parked && t.idle_s > horizon)
        say(`has owed its money step for ${t.idle_s} s, past the sweepers' horizon (${horizon} s), and no open exception parks it`);

      if (rail) {
        const truth: RailTransferStatus | undefined = rail.get(t.id);
        const paidExcused = exc.some((e) => e.kind === RAIL_PAID_EXCUSE);
        const failedExcused = exc.some((e) => e.kind === RAIL_FAILED_EXCUSE);
        const onItsWay = !quiet && (t.state === 'DISPATCHED' || t.state === 'COMPLETING');
        if (truth === 'COMPLETED' && t.state !== 'COMPLETED' && !onItsWay && !paidExcused)
          say(`paid by the rail (${s.rail!.name}) but not COMPLETED, and no ${RAIL_PAID_EXCUSE} exception`);
        if ((hold === 'COMMITTED' || t.state === 'COMPLETED') && truth !== 'COMPLETED' && !failedExcused)
          say(`committed, but the rail says ${truth ?? 'it never received it'}`);
        if (o.settled && truth === 'PENDING' && ['FAILED', 'EXPIRED', 'REJECTED'].includes(t.state)) say('final while the rail still has it pending');
      }
    }
  }
  if (!s.rail) notChecked.push('rail side (no rail truth)');

  // Every transfer the rail received is one of ours (a payout we do not know of is money gone).
  if (s.rail?.transferIds && !o.companyId) {
    let railAfter = '';
    for (;;) {
      const ids = await s.rail.transferIds(railAfter, PAGE);
      if (ids.length === 0) break;
      railAfter = ids[ids.length - 1]!;
      const uuids = ids.filter((id) => /^[0-9a-f-]{36}$/i.test(id));
      const known = new Set(
        (await s.transfer.query<{ id: string }>(`select id::text as id from transfer.transfers where id = any($1::uuid[])`, [uuids])).map((r) => r.id),
      );
      for (const id of ids) if (!known.has(id)) bad.add(`the rail (${s.rail.name}) received transfer ${id}, unknown to the transfer service`);
    }
  }

  // An open hold whose transfer is unknown would keep pending_out up for ever (a return's hold is checked by `inbound`).
  const hs = companyScope(o, 0);
  const open = await s.ledger.query<{ id: string; movement_id: string; company_id: string }>(
    `select id::text as id, movement_id::text as movement_id, company_id from ledger.holds where status = 'OPEN' and return_of is null${hs.sql}`,
    hs.params,
  );
  for (let i = 0; i < open.length; i += PAGE) {
    const slice = open.slice(i, i + PAGE);
    const known = new Set(
      (
        await s.transfer.query<{ id: string }>(`select id::text as id from transfer.transfers where id = any($1::uuid[])`, [slice.map((h) => h.movement_id)])
      ).map((r) => r.id),
    );
    for (const h of slice)
      if (!known.has(h.movement_id))
        bad.add(`open hold ${h.id} (company ${h.company_id}) belongs to transfer ${h.movement_id}, unknown to the transfer service`);
  }

  const live = [...byState].filter(([st]) => !['COMPLETED', 'FAILED', 'EXPIRED', 'REJECTED'].includes(st)).reduce((a, [, n]) => a + n, 0);
  return {
    name: 'holds',
    counts: [
      ['transfers', transfers],
      ['live', live],
      ['completed', byState.get('COMPLETED') ?? 0],
      ['open holds', open.length],
    ],
    violations: bad.lines,
    total: bad.total,
    notChecked,
  };
}
