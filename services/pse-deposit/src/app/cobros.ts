import { AppError, inSagaSpan, PeriodicTask, Problems, type Logger, type SqlTx } from '@wallet/platform';
import QRCode from 'qrcode';
import { cobroEventsV1, type cobroV1 } from '@wallet/proto';
import {
  cobroTolerance,
  validateTolerance,
  isCobroId,
  isShown,
  newCobroId,
  newTransactionId,
  requestFingerprint,
  validateCreateCobro,
  type CobroRecord,
  type CobroStatus,
  type CreateCobroInput,
  type CobroPsePayer,
  usesBreb,
} from '../domain/cobro.js';
import { isDepositId } from '../domain/deposit.js';
import { COBRO_MACHINE, type CobroEvent } from '../domain/cobro-machine.js';
import type {
  CobroCursor,
  CobroIssueFacts,
  CobroListFilter,
  CobroPatch,
  CobroStore,
  InboundPayment,
  MatchOutcome,
  OwedAutoReturn,
  PaymentReturned,
  PaymentReversed,
} from './cobro-ports.js';
import type { OutboxEvent } from './ports.js';

/** A cobro's dynamic key and QR, at collect-key (IssueCobroKey / CloseCobroKey; the company in the call metadata). */
export interface CobroKeysPort {
  issue(
    companyId: string,
    r: { cobroId: string; transactionId: string; amountCents: bigint | null; expiresAt: Date; merchantName: string; ivaApplicable: boolean },
  ): Promise<{ keyId: string; keyValue: string; qrPayload: string }>;
  close(companyId: string, cobroId: string): Promise<void>;
}

/**
 * A cobro's automatic return (policy `return`), asked of the payment's owner with the return's own id
 * (idempotent): collect-key for a Bre-B payment, this service's refunds for a PSE one. Answers the
 * return's status (PENDING, RETURNED, FAILED); throws the owner's error (a definite one, e.g.
 * INSUFFICIENT_BALANCE, ends the automatic return FAILED; anything else is asked again).
 */
export interface CobroReturnsPort {
  request(
    companyId: string,
    r: { returnId: string; depositId: string; source: 'BREB' | 'PSE'; amount: bigint; reason: 'OVERPAYMENT' | 'DUPLICATE'; description: string },
  ): Promise<{ status: string }>;
}

/** A cobro's PSE link: this service's own PSE deposit (CreatePseDeposit), one per cobro, valid until the cobro expires. */
export interface CobroPseLinksPort {
  create(
    companyId: string,
    cobro: { id: string; reference: string; amount: bigint; expiresAt: Date },
    payer: CobroPsePayer,
    profile: { name: string; ivaApplicable: boolean },
  ): Promise<{ depositId: string; paygatewayUrl: string }>;
}

export interface CobroDeps {
  store: CobroStore;
  keys: CobroKeysPort;
  pseLinks: CobroPseLinksPort;
  returns: CobroReturnsPort;
  log: Logger;
  now: () => Date;
  newId: () => string;
  /** How long past expiresAt the sweeper waits before expiring an open cobro (payments on their way still count). */
  expiryGraceSeconds: number;
  /** The shortest life a cobro may be given (COBRO_MIN_TTL_SECONDS; 60 s unless an operator lowers it). */
  minTtlSeconds?: number;
}

/** The `cobro.*` subjects (COBRO_MACHINE's `emits`). */
export type CobroEventKind = 'created' | 'partially_paid' | 'paid' | 'expired' | 'cancelled' | 'payment_reversed';

/** A cobro with everything a client sees (the gRPC answer and the events' payload). */
export function cobroToProto(c: CobroRecord): cobroV1.Cobro {
  return {
    id: c.id,
    reference: c.reference,
    status: isShown(c.state) ? c.state : 'OPEN',
    amountType: c.amountType,
    ...(c.amount !== null ? { amountCents: c.amount } : {}),
    ...(c.minAmount !== null ? { minAmountCents: c.minAmount } : {}),
    ...(c.maxAmount !== null ? { maxAmountCents: c.maxAmount } : {}),
    paidAmountCents: c.paidAmount,
    returnedAmountCents: c.returnedAmount,
    toleranceBelowCents: c.toleranceBelow,
    toleranceAboveCents: c.toleranceAbove,
    currency: 'COP',
    ...(c.description ? { description: c.description } : {}),
    ...(c.expectedPayer
      ? {
          expectedPayer: {
            ...(c.expectedPayer.document ? { document: c.expectedPayer.document } : {}),
            ...(c.expectedPayer.name ? { name: c.expectedPayer.name } : {}),
          },
        }
      : {}),
    metadata: c.metadata,
    overpaymentPolicy: c.overpaymentPolicy,
    transactionId: c.transactionId,
    ...(c.breb ? { breb: { keyId: c.breb.keyId, keyValue: c.breb.keyValue, qrPayload: c.breb.qrPayload } } : {}),
    ...(c.pse ? { pse: { depositId: c.pse.depositId, paygatewayUrl: c.pse.paygatewayUrl } } : {}),
    payments: c.payments.map((p) => ({
      depositId: p.depositId,
      source: p.source,
      amountCents: p.amount,
      netAmountCents: p.netAmount,
      matchedBy: p.matchedBy,
      disposition: p.disposition,
      returnedCents: p.returned,
      reversedCents: p.reversed,
      ...(p.payerName ? { payerName: p.payerName } : {}),
      ...(p.payerDocument ? { payerDocument: p.payerDocument } : {}),
      receivedAt: p.receivedAt,
      matchedAt: p.matchedAt,
      ...(p.autoReturn
        ? {
            autoReturn: {
              returnId: p.autoReturn.returnId,
              amountCents: p.autoReturn.amount,
              status: p.autoReturn.status,
              ...(p.autoReturn.error ? { error: p.autoReturn.error } : {}),
            },
          }
        : {}),
    })),
    expiresAt: c.expiresAt,
    createdAt: c.createdAt,
    updatedAt: c.updatedAt,
    ...(c.paidAt ? { paidAt: c.paidAt } : {}),
    ...(c.closedAt ? { closedAt: c.closedAt } : {}),
    methods: c.methods,
    created: false,
  };
}

/** `cobro.<kind>` on stream COBROS: a CobroEvent (proto3 JSON) carrying the cobro as it is after the change. */
export function cobroEvent(deps: Pick<CobroDeps, 'now' | 'newId'>, kind: CobroEventKind, c: CobroRecord, depositId?: string): OutboxEvent {
  const id = deps.newId();
  const payload = cobroEventsV1.CobroEvent.toJSON({
    eventId: id,
    companyId: c.companyId,
    cobro: cobroToProto(c),
    ...(depositId ? { depositId } : {}),
    occurredAt: deps.now(),
  });
  return { id, subject: `cobro.${kind}`, payload };
}

/** The event a transition writes (COBRO_MACHINE.emits), built from the changed cobro. */
export const eventFor =
  (deps: Pick<CobroDeps, 'now' | 'newId'>, kind: CobroEventKind) =>
  (c: CobroRecord): OutboxEvent =>
    cobroEvent(deps, kind, c);

const requireCompany = (companyId: string | undefined): string => {
  if (!companyId) throw new AppError('AUTH_REQUIRED');
  return companyId;
};

async function findCobro(deps: CobroDeps, companyId: string, id: string): Promise<CobroRecord> {
  const c = isCobroId(id ?? '') ? await deps.store.get(companyId, id) : undefined;
  if (!c || !isShown(c.state)) throw new AppError('COBRO_NOT_FOUND');
  return c;
}

/**
 * Issues the cobro's dynamic key (idempotent at collect-key on the cobro id) and its PSE link
 * (idempotent here on the cobro id), then opens the cobro (`issued`: CREATING → OPEN + cobro.created). Any writer may finish a CREATING cobro (the creation
 * call, its retry with the same reference, the sweeper): the compare-and-set makes one of them open
 * it, and all get the same key.
 */
async function issueAndOpen(deps: CobroDeps, f: CobroIssueFacts, actor: 'creator' | 'sweeper'): Promise<CobroRecord> {
  const c = f.cobro;
  const patch: CobroPatch = {};
  try {
    if (usesBreb(c.methods)) {
      patch.breb = await deps.keys.issue(c.companyId, {
        cobroId: c.id,
        transactionId: c.transactionId,
        amountCents: c.amountType === 'FIXED' ? c.amount : null,
        expiresAt: c.expiresAt,
        merchantName: f.merchantName,
        ivaApplicable: f.ivaApplicable,
      });
    }
    if (c.methods.includes('PSE') && c.psePayer && c.amount !== null) {
      patch.pse = await deps.pseLinks.create(c.companyId, { id: c.id, reference: c.reference, amount: c.amount, expiresAt: c.expiresAt }, c.psePayer, {
        name: f.merchantName,
        ivaApplicable: f.ivaApplicable,
      });
    }
  } catch (err) {
    await deps.store.countIssueAttempt(c.id);
    throw err;
  }
  const opened = await deps.store.transition(c.id, 'issued', actor, patch, eventFor(deps, 'created'));
  if (opened) return opened;
  const now = await deps.store.get(c.companyId, c.id);
  if (!now) throw new AppError('COBRO_NOT_FOUND');
  return now;
}

export class CreateCobro {
  constructor(private readonly deps: CobroDeps) {}

  /**
   * Validate → store CREATING (the reference is unique per company: the same request again finds it;
   * another request with that reference is REFERENCE_CONFLICT) → the dynamic key and QR at collect-key →
   * OPEN + cobro.created. When collect-key does not answer, the cobro stays CREATING (unseen) and the
   * error is returned: a retry with the same reference, or the sweeper, finishes it.
   */
  async execute(
    companyIdIn: string | undefined,
    input: CreateCobroInput,
    profile: { name: string; ivaApplicable: boolean },
  ): Promise<{ cobro: CobroRecord; created: boolean }> {
    const companyId = requireCompany(companyIdIn);
    const deps = this.deps;
    const now = deps.now();
    const v = validateCreateCobro(input, now, (deps.minTtlSeconds ?? 60) * 1000);
    const requestHash = requestFingerprint(v);
    // The company's amount tolerance as it is now becomes this cobro's (a later change never alters it).
    const tolerance = cobroTolerance((await deps.store.settings(companyId)).tolerance, v);
    const stored = await deps.store.insertCreating({
      ...v,
      toleranceBelow: tolerance.below,
      toleranceAbove: tolerance.above,
      id: newCobroId(),
      companyId,
      transactionId: newTransactionId(),
      requestHash,
      createdAt: now,
      ivaApplicable: profile.ivaApplicable,
      merchantName: profile.name,
    });
    if (stored.created) {
      return {
        cobro: await issueAndOpen(deps, { cobro: stored.cobro, ivaApplicable: profile.ivaApplicable, merchantName: profile.name, issueAttempts: 0 }, 'creator'),
        created: true,
      };
    }
    const existing = stored.existing;
    if (existing.cobro.requestHash !== requestHash)
      throw new AppError('REFERENCE_CONFLICT', 'La referencia ya se usó en otro cobro de la empresa con datos diferentes.');
    if (existing.cobro.state === 'CREATING') return { cobro: await issueAndOpen(deps, existing, 'creator'), created: true };
    return { cobro: (await deps.store.get(companyId, existing.cobro.id))!, created: false };
  }
}

export class GetCobro {
  constructor(private readonly deps: CobroDeps) {}
  execute(companyId: string | undefined, id: string): Promise<CobroRecord> {
    return findCobro(this.deps, requireCompany(companyId), id);
  }
}

const encodeCursor = (c: CobroCursor) => Buffer.from(JSON.stringify([c.createdAt, c.id])).toString('base64url');
/** A page cursor (createdAt, id) whose id passes `isId`; anything else is 400 at query.cursor. */
function decodeCursor(s: string, isId: (id: string) => boolean = isCobroId): CobroCursor {
  try {
    const [createdAt, id] = JSON.parse(Buffer.from(s, 'base64url').toString('utf8')) as [string, string];
    if (typeof createdAt === 'string' && !Number.isNaN(Date.parse(createdAt)) && typeof id === 'string' && isId(id)) return { createdAt, id };
  } catch {
    /* answered below */
  }
  new Problems().add('query.cursor', 'El cursor no es válido.').throwIfAny();
  throw new AppError('INVALID_REQUEST');
}

export class ListCobros {
  constructor(private readonly deps: CobroDeps) {}
  async execute(
    companyIdIn: string | undefined,
    q: CobroListFilter & { limit?: number | undefined; cursor?: string | undefined },
  ): Promise<{ items: CobroRecord[]; nextCursor: string | null }> {
    const companyId = requireCompany(companyIdIn);
    const limit = Math.min(Math.max(q.limit || 50, 1), 200);
    if (q.status !== undefined && !isShown(q.status as CobroStatus)) {
      new Problems().add('query.status', 'Estado no válido.').throwIfAny();
    }
    const rows = await this.deps.store.list(companyId, q, limit + 1, q.cursor ? decodeCursor(q.cursor) : null);
    const page = rows.slice(0, limit);
    return { items: page, nextCursor: rows.length > limit ? encodeCursor(page[page.length - 1]!.cursor) : null };
  }
}

export class CancelCobro {
  constructor(private readonly deps: CobroDeps) {}

  /**
   * OPEN / PARTIALLY_PAID → CANCELLED + cobro.cancelled, then the dynamic key is deleted (after the
   * state is won; the sweeper retries a deletion that failed). Idempotent: a CANCELLED cobro answers
   * as it is; a PAID or EXPIRED one is INVALID_STATE_TRANSITION. What was paid stays credited.
   */
  async execute(companyIdIn: string | undefined, id: string): Promise<CobroRecord> {
    const companyId = requireCompany(companyIdIn);
    const deps = this.deps;
    const before = await findCobro(deps, companyId, id);
    const after = await deps.store.transition(before.id, 'cancel', 'company', {}, eventFor(deps, 'cancelled'));
    if (!after) {
      const now = await findCobro(deps, companyId, id);
      if (now.state === 'CANCELLED') return now;
      throw new AppError('INVALID_STATE_TRANSITION', `El cobro está ${now.state}: solo se cancela un cobro OPEN o PARTIALLY_PAID.`);
    }
    await closeKey(deps, after.companyId, after.id);
    return after;
  }
}

/** Deletes a closed cobro's dynamic key; a failure is left to the sweeper (keysToClose). */
async function closeKey(deps: CobroDeps, companyId: string, cobroId: string): Promise<void> {
  try {
    await deps.keys.close(companyId, cobroId);
    await deps.store.markKeyClosed(cobroId);
  } catch (err) {
    deps.log.warn({ cobroId, err: (err as Error).message }, 'cobro key not closed yet: left to the sweeper');
  }
}

export class GetCobroQrPng {
  constructor(private readonly deps: CobroDeps) {}
  async execute(companyId: string | undefined, id: string): Promise<Buffer> {
    const c = await findCobro(this.deps, requireCompany(companyId), id);
    if (!c.breb) throw new AppError('COBRO_NOT_FOUND');
    return QRCode.toBuffer(c.breb.qrPayload, { type: 'png', errorCorrectionLevel: 'M', margin: 4, width: 512 });
  }
}

/**
 * The cobros' sweeper, every interval, through the table like every other writer: CREATING cobros
 * left by an interrupted creation are opened (or ABANDONED once past their expiry); open cobros past
 * expiresAt + the grace are EXPIRED (a compare-and-set: of two replicas, or a replica and a payment,
 * one wins); closed cobros' keys are deleted at collect-key until it confirms.
 */
export class CobroSweeper {
  private readonly task: PeriodicTask;

  constructor(
    private readonly deps: CobroDeps,
    private readonly opts: { intervalMs: number; batch: number; creatingAfterMs?: number },
  ) {
    this.task = new PeriodicTask('cobro sweeper', opts.intervalMs, () => this.tick(), deps.log);
  }

  start(): void {
    this.task.start();
  }

  stop(): Promise<void> {
    return this.task.stop();
  }

  async tick(): Promise<void> {
    const deps = this.deps;
    const now = deps.now();
    try {
      for (const f of await deps.store.stuckCreating(new Date(now.getTime() - (this.opts.creatingAfterMs ?? 30_000)), this.opts.batch)) {
        if (this.task.stopping) return;
        if (f.cobro.expiresAt <= now) {
          await deps.store.transition(f.cobro.id, 'abandon', 'sweeper', {}, () => null);
          deps.log.warn({ cobroId: f.cobro.id, attempts: f.issueAttempts }, 'cobro abandoned: its key was never issued before it expired');
          continue;
        }
        try {
          await inSagaSpan('cobro.sweep issue', { traceparent: null, attributes: { 'wallet.cobro_id': f.cobro.id } }, () => issueAndOpen(deps, f, 'sweeper'));
        } catch (err) {
          deps.log.warn({ cobroId: f.cobro.id, err: (err as Error).message }, 'cobro key issue retry failed');
        }
      }
      const due = await deps.store.dueForExpiry(new Date(now.getTime() - deps.expiryGraceSeconds * 1000), this.opts.batch);
      for (const id of due) {
        if (this.task.stopping) return;
        const c = await deps.store.transition(id, 'expire', 'sweeper', {}, eventFor(deps, 'expired'));
        if (c) await closeKey(deps, c.companyId, c.id);
      }
      for (const k of await deps.store.keysToClose(now, this.opts.batch)) {
        if (this.task.stopping) return;
        await closeKey(deps, k.companyId, k.id);
      }
      for (const r of await deps.store.autoReturnsOwed(this.opts.batch)) {
        if (this.task.stopping) return;
        await requestAutoReturn(deps, r);
      }
    } catch (err) {
      deps.log.warn({ err: (err as Error).message }, 'cobro sweeper tick failed');
    }
  }
}

/** Owner answers that end an automatic return FAILED (the company returns it by hand once it can); anything else is asked again. */
const AUTO_RETURN_REFUSALS = [
  'INSUFFICIENT_BALANCE',
  'RETURN_EXCEEDS_PAYMENT',
  'INVALID_STATE_TRANSITION',
  'DEPOSIT_NOT_FOUND',
  'REFERENCE_CONFLICT',
  'WALLET_NOT_PROVISIONED',
  'FAST_WALLET_MISSING',
  'INVALID_REQUEST',
];

/**
 * An automatic return the match recorded OWED (policy `return`): asked of the payment's owner under its
 * own id (a retry after a crash or a time-out gets the same return), then REQUESTED — the return's own
 * life (PENDING → RETURNED, `deposit.returned`) is the owner's — or FAILED when the owner refused it for
 * good (the wallet could not cover it: the company returns it by hand). Anything else stays OWED.
 */
export async function requestAutoReturn(deps: Pick<CobroDeps, 'returns' | 'store' | 'log'>, r: OwedAutoReturn): Promise<void> {
  try {
    const out = await deps.returns.request(r.companyId, {
      returnId: r.returnId,
      depositId: r.depositId,
      source: r.source,
      amount: r.amount,
      reason: 'OVERPAYMENT',
      description: `Devolución automática del cobro ${r.cobroId}`,
    });
    if (await deps.store.settleAutoReturn(r.depositId, 'REQUESTED', null)) {
      deps.log.info({ cobroId: r.cobroId, depositId: r.depositId, returnId: r.returnId, status: out.status }, "cobro's automatic return requested");
    }
  } catch (err) {
    if (err instanceof AppError && AUTO_RETURN_REFUSALS.includes(err.code)) {
      await deps.store.settleAutoReturn(r.depositId, 'FAILED', err.code);
      deps.log.warn(
        { cobroId: r.cobroId, depositId: r.depositId, returnId: r.returnId, code: err.code },
        "cobro's automatic return refused: left for the company",
      );
      return;
    }
    deps.log.warn({ cobroId: r.cobroId, depositId: r.depositId, err: (err as Error).message }, "cobro's automatic return not requested yet; asked again");
  }
}

/** The matcher's event builder: cobro.partially_paid / cobro.paid / cobro.payment_reversed with the payment that made it. */
export const matchEvent =
  (deps: Pick<CobroDeps, 'now' | 'newId'>) =>
  (c: CobroRecord, depositId: string, event: CobroEvent): OutboxEvent => {
    const kind = COBRO_MACHINE[event].emits;
    if (!kind) throw new Error(`cobro event ${event} emits nothing`);
    return cobroEvent(deps, kind, c, depositId);
  };

export class AttachPayment {
  constructor(private readonly deps: CobroDeps) {}

  /**
   * POST /cobros/{id}/payments: one of the company's credited payments, attached to one of its
   * cobros by hand (matchedBy MANUAL). The store decides under both rows' locks (SqlCobroStore.attach).
   */
  async execute(companyIdIn: string | undefined, cobroId: string, depositId: string): Promise<CobroRecord> {
    const companyId = requireCompany(companyIdIn);
    if (!isCobroId(cobroId ?? '')) throw new AppError('COBRO_NOT_FOUND');
    if (!isDepositId(depositId ?? '')) throw new AppError('DEPOSIT_NOT_FOUND');
    const deps = this.deps;
    const r = await deps.store.attach(companyId, cobroId, depositId, deps.now(), matchEvent(deps));
    if (r.kind === 'refused') throw new AppError(r.code, r.message);
    if (!r.repeat) deps.log.info({ cobroId, depositId, status: r.cobro.state }, 'payment attached to a cobro by hand');
    return r.cobro;
  }
}

export class ListUnmatched {
  constructor(private readonly deps: CobroDeps) {}
  async execute(companyIdIn: string | undefined, q: { limit?: number | undefined; cursor?: string | undefined }) {
    const companyId = requireCompany(companyIdIn);
    const limit = Math.min(Math.max(q.limit || 50, 1), 200);
    const after = q.cursor ? decodeCursor(q.cursor, isDepositId) : null;
    const rows = await this.deps.store.listUnmatched(companyId, limit + 1, after);
    const page = rows.slice(0, limit);
    return { items: page, nextCursor: rows.length > limit ? encodeCursor(page[page.length - 1]!.cursor) : null };
  }
}

/** GET /cobros/settings: the company's matching rules (its amount tolerance). */
export class GetCobroSettings {
  constructor(private readonly deps: CobroDeps) {}
  execute(companyIdIn: string | undefined) {
    return this.deps.store.settings(requireCompany(companyIdIn));
  }
}

/** PUT /cobros/settings: the company's amount tolerance, for the cobros it makes from now on (a cobro keeps the tolerance it was made with). */
export class SetCobroSettings {
  constructor(private readonly deps: CobroDeps) {}
  async execute(companyIdIn: string | undefined, i: { amountToleranceCents: bigint; amountToleranceBps: number }) {
    const companyId = requireCompany(companyIdIn);
    const t = validateTolerance(i);
    const out = await this.deps.store.setSettings(companyId, t, this.deps.now());
    this.deps.log.info({ companyId, toleranceCents: t.cents.toString(), toleranceBps: t.bps }, 'cobro settings changed');
    return out;
  }
}

export function cobroUseCases(deps: CobroDeps) {
  return {
    getSettings: new GetCobroSettings(deps),
    setSettings: new SetCobroSettings(deps),
    attach: new AttachPayment(deps),
    unmatched: new ListUnmatched(deps),
    create: new CreateCobro(deps),
    get: new GetCobro(deps),
    list: new ListCobros(deps),
    cancel: new CancelCobro(deps),
    qrPng: new GetCobroQrPng(deps),
  };
}
export type CobroUseCases = ReturnType<typeof cobroUseCases>;

/** The log line of a match outcome. */
function logMatch(log: Logger, p: InboundPayment, out: MatchOutcome): void {
  if (out.kind === 'matched') {
    log.info(
      { depositId: p.depositId, cobroId: out.cobroId, matchedBy: out.matchedBy, disposition: out.disposition, event: out.event },
      'payment matched to a cobro',
    );
  } else if (out.kind === 'unmatched') {
    log.info({ depositId: p.depositId, cobroId: out.cobroId, reason: out.reason }, 'payment matched no open cobro: listed unmatched');
  }
}

/** The matcher the listing consumer runs for every credited payment (in its inbox transaction), with its log line. */
export function cobroMatcher(deps: CobroDeps) {
  const mk = matchEvent(deps);
  return async (tx: SqlTx, p: InboundPayment) => {
    const out = await deps.store.match(tx, p, deps.now(), mk);
    logMatch(deps.log, p, out);
    return out;
  };
}

/** The listing consumer's step for a payment's return that reached the payer: taken off its cobro (once per return). */
export function cobroReturnApplier(deps: CobroDeps) {
  return async (tx: SqlTx, r: PaymentReturned) => {
    const out = await deps.store.applyReturn(tx, r);
    if (out === 'applied') deps.log.info({ depositId: r.depositId, returnId: r.returnId, amount: r.amount.toString() }, "payment's return taken off its cobro");
    return out;
  };
}

/**
 * The listing consumer's step for a provider's reversal of a credited payment (`deposit.reversed`): taken off
 * its cobro once (SqlCobroStore.applyReversal), the cobro's state following its new total, with its log line.
 */
export function cobroReversalApplier(deps: CobroDeps) {
  const mk = matchEvent(deps);
  return async (tx: SqlTx, r: PaymentReversed) => {
    const out = await deps.store.applyReversal(tx, r, deps.now(), mk);
    if (out.kind === 'applied') {
      deps.log.info(
        { depositId: r.depositId, cobroId: out.cobroId, counted: out.counted.toString(), event: out.event },
        "payment's reversal taken off its cobro",
      );
    } else if (out.kind === 'kept' && out.unlisted) {
      deps.log.info({ depositId: r.depositId }, 'reversed payment taken off the unmatched payments');
    }
    return out;
  };
}

/** The same for a page of payments, in order (SqlCobroStore.matchMany: the outcomes of one by one, in a few statements). */
export function cobroPageMatcher(deps: CobroDeps) {
  const mk = matchEvent(deps);
  return async (tx: SqlTx, ps: InboundPayment[]) => {
    const outs = await deps.store.matchMany(tx, ps, deps.now(), mk);
    for (const [i, out] of outs.entries()) logMatch(deps.log, ps[i]!, out);
    return outs;
  };
}
