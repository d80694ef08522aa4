import { AppError, invalidRequest, isErrorCode } from '@wallet/platform';
import { bogotaWindows, effectiveLimits } from '../domain/counterparty-limits.js';
import { normalizeDocument, sendAmlCandidates } from '../domain/names.js';
import { CAP_ERROR, RAIL_CAPS } from '../domain/rails.js';
import { thresholdDecision, type PolicyDecision } from '../domain/approval-policy.js';
import type { ApprovalRef, FeeBreakdown, TransferRecord, TransferState } from '../domain/transfer.js';
import type { TransferDeps } from './deps.js';
import { IDEMPOTENCY_KEY_TAKEN, REFERENCE_TAKEN } from './ports.js';
import { validateSend, type SendCommand, type SendInput } from './send-input.js';
import { reserveCommandOf, type TransferSaga } from './transfer-saga.js';
import { requireCompany } from './validation.js';
import { amlAccountOf, directLookups, checkDestination } from './send-destination.js';
import { SEND_MESSAGES } from './send-messages.js';
import { counterpartyOf } from './counterparty-lookup.js';
import type { PaymentToDecide, PolicyVerdict } from './policy-book.js';

export interface SendResult {
  transfer: TransferRecord;
  replayed: boolean;
  /** The transfer was already bound to the request's Idempotency-Key (an idempotent replay). */
  keyReplayed?: boolean;
}

/** Thrown inside a send whose insert found its Idempotency-Key taken; `execute` answers the transfer holding it. */
class IdempotencyKeyTaken extends Error {}
/** Thrown inside a send whose insert found its `reference` claimed by another request; `withReference` answers. */
class ReferenceTaken extends Error {}

/** How far a send got: whether its transfer was recorded (null while that statement's outcome is unknown). */
interface SendProgress {
  recorded: boolean | null;
}

/** States whose outcome is being decided right now: a keyed retry waits for the decision. */
const UNDECIDED: readonly TransferState[] = ['RECEIVED', 'ABANDONING'];

const sleep = (ms: number) => new Promise((r) => setTimeout(r, ms));

/**
 * POST /transfers/send (§4.5, CONTRACT §9). Checks in the contract's order — schema → caps →
 * TARGET_DOCUMENT_REQUIRED → AML → directory / key state / NAME_MISMATCH (BREB) or bank account
 * (ACH) → the company's approval policy (docs/policies.md: POLICY_REFUSED, or the approvals it
 * asks) → counterparty limits → balance — the first failing check answers. Then the saga: the
 * transfer is recorded RECEIVED, funds reserved in the ledger (RESERVED: accepted), dispatched to
 * the rail (DISPATCHED), and the answer is 201 PENDING. With a `reference`, the request is
 * idempotent inside the window (see `withReference`); with an `Idempotency-Key`, for good (see
 * `boundToKey`).
 */
export class SendTransfer {
  constructor(
    private readonly deps: TransferDeps,
    private readonly saga: TransferSaga,
  ) {}

  async execute(ctx: { companyId?: string | undefined; apiKeyId?: string | undefined }, input: SendInput): Promise<SendResult> {
    const companyId = requireCompany(ctx.companyId);
    const cmd = await this.validated(companyId, input);
    const apiKeyId = ctx.apiKeyId ?? null;
    if (cmd.idempotencyKey) {
      const bound = await this.boundToKey(companyId, cmd, cmd.idempotencyKey);
      if (bound) return bound;
    }
    try {
      if (!cmd.reference) return { transfer: await this.process(companyId, apiKeyId, this.deps.newId(), cmd), replayed: false };
      return await this.claimingReference(companyId, apiKeyId, cmd, cmd.reference);
    } catch (err) {
      if (!(err instanceof IdempotencyKeyTaken) || !cmd.idempotencyKey) throw err;
      // A concurrent request with the key inserted its transfer first: that one is the answer.
      const bound = await this.boundToKey(companyId, cmd, cmd.idempotencyKey);
      if (!bound) throw new AppError('INTERNAL_ERROR');
      return bound;
    }
  }

  /**
   * The schema checks; a send naming a `counterpartyId` is checked as the send of its destination
   * (its key and holder, or its account), and carries the counterparty's verification and tags for
   * the approval policy. A destination given beside it is refused (400).
   */
  private async validated(companyId: string, input: SendInput): Promise<SendCommand> {
    const id = input.counterpartyId || null;
    if (id === null) return validateSend(input);
    if (input.brebKey || input.bankAccount || input.targetAnchorHandle) {
      throw invalidRequest([{ path: 'counterpartyId', message: 'Se envía en lugar del destino (destination o targetAnchorHandle), no junto con él.' }]);
    }
    const c = await counterpartyOf(this.deps, companyId, id);
    const named: SendInput =
      c.destination.kind === 'BREB'
        ? {
            ...input,
            brebKey: { type: c.destination.keyType, value: c.destination.keyValue },
            targetName: input.targetName || c.holderName,
            targetDocument: input.targetDocument || c.documentNumber,
          }
        : {
            ...input,
            bankAccount: {
              bankId: c.destination.bankId,
              accountTypeId: c.destination.accountTypeId,
              accountNumber: c.destination.accountNumber,
              documentTypeId: c.documentTypeId,
              documentNumber: c.documentNumber,
              holderFirstName: c.destination.holderFirstName,
              holderLastName: c.destination.holderLastName,
              bankName: c.destination.bankName,
              bankAchCode: c.destination.bankAchCode,
            },
          };
    const cmd = validateSend(named);
    cmd.counterparty = { id: c.id, verified: c.status === 'VERIFIED', tags: c.tags };
    return cmd;
  }

  /**
   * `Idempotency-Key` idempotency. The transfer is inserted with the key (unique per
   * company, in the statement that creates it), so one key is one transfer, whatever happens to the
   * request that made it: a retry after a gateway time-out or crash, or a concurrent duplicate, gets
   * that transfer here in its CURRENT state and runs nothing else (no second reserve, no dispatch).
   * Undefined when no transfer holds the key (the request then runs, and its insert decides a race).
   * - another request under the key (its fingerprint differs) → IDEMPOTENCY_KEY_REUSED;
   * - still being decided (RECEIVED, ABANDONING) → waits for the decision, up to `duplicateWaitMs`,
   *   then 503 (the outcome is still unknown; a later retry gets it);
   * - refused by a business rule when it was reserved (REJECTED with a catalogue code, e.g.
   *   INSUFFICIENT_BALANCE) → the same refusal;
   * - otherwise the transfer as it is now (PENDING, COMPLETED, FAILED, AWAITING_APPROVAL…; a send
   *   given up before its reserve landed, REJECTED/ABANDONED, reads as FAILED: no money moved).
   */
  private async boundToKey(companyId: string, cmd: SendCommand, key: string): Promise<SendResult | undefined> {
    const { deps } = this;
    const deadline = Date.now() + deps.settings.duplicateWaitMs;
    let step = 20;
    for (;;) {
      const bound = await deps.store.findByIdempotencyKey(companyId, key, cmd.requestHash);
      if (!bound) return undefined;
      if (!bound.sameRequest) throw new AppError('IDEMPOTENCY_KEY_REUSED');
      const t = bound.transfer;
      if (!UNDECIDED.includes(t.state)) {
        if (t.state === 'REJECTED' && isErrorCode(bound.rejectCode)) throw new AppError(bound.rejectCode);
        return { transfer: t, replayed: true, keyReplayed: true };
      }
      if (Date.now() > deadline) throw new AppError('SERVICE_UNAVAILABLE', SEND_MESSAGES.keyInFlight);
      await sleep(step);
      step = Math.min(250, Math.round(step * 1.5));
    }
  }

  /**
   * `reference` idempotency, the common case first (docs/benchmarks.md, cost per send): the claim is made by the statement
   * that records the transfer (see `insertWithinLimits`), so a first request spends no statement of
   * its own on it. Whenever that is not the whole story, the answer is the one `withReference`
   * gives (a replay, a wait, REFERENCE_CONFLICT, or the refusal once it holds the claim itself):
   * - the statement found the reference held by another request (nothing was recorded);
   * - the request was refused before it was recorded (AML, the directory, the limits…) while some
   *   request holds the reference: an accepted original must be replayed, not refused afresh
   *   because the key or the usage changed since. With no claim, the refusal stands (nothing to free).
   * Once the transfer is recorded, its own state answers the reference, as in `withReference`.
   */
  private async claimingReference(companyId: string, apiKeyId: string | null, cmd: SendCommand, reference: string): Promise<SendResult> {
    const { deps } = this;
    const progress: SendProgress = { recorded: false };
    try {
      return { transfer: await this.process(companyId, apiKeyId, deps.newId(), cmd, progress), replayed: false };
    } catch (err) {
      if (err instanceof ReferenceTaken) return this.withReference(companyId, apiKeyId, cmd, reference);
      if (progress.recorded !== false || err instanceof IdempotencyKeyTaken) throw err;
      const held = await deps.store.getReference(companyId, reference, cmd.requestHash);
      if (held) return this.withReference(companyId, apiKeyId, cmd, reference);
      throw err;
    }
  }

  /**
   * `reference` idempotency (§7.4, CONTRACT §2/§9). The first request claims (company, reference)
   * for the window; an identical request finds the claim and gets the original transfer in its
   * current state (`replayed`), waiting while the first is still being decided; a different body
   * is REFERENCE_CONFLICT. The claim is answered when the transfer is accepted (RESERVED) and
   * released when the request is refused before that (any 4xx/5xx), so a retry runs normally.
   * After the window the reference is free again.
   */
  private async withReference(companyId: string, apiKeyId: string | null, cmd: SendCommand, reference: string): Promise<SendResult> {
    const { deps } = this;
    const transferId = deps.newId();
    const deadline = Date.now() + deps.settings.duplicateWaitMs;
    let step = 20;
    for (;;) {
      const claim = await deps.store.claimReference(companyId, reference, cmd.requestHash, transferId, deps.settings.idempotencyWindowSeconds);
      if (claim.owner) {
        try {
          return { transfer: await this.process(companyId, apiKeyId, transferId, cmd), replayed: false };
        } catch (err) {
          // Refused before the transfer was recorded: free the reference. Once recorded, its own
          // state decides (REJECTED frees it; accepted, or FAILED after an abandon, answers it),
          // whatever this request saw: a reserve whose reply was lost may still have landed, and a
          // duplicate must then wait for that outcome, not make a second transfer. If we cannot
          // tell, the claim stays (it lapses with the window).
          const recorded = await deps.store.get(transferId).then(
            (t) => t !== undefined,
            () => true,
          );
          if (!recorded) {
            await deps.store
              .releaseReference(companyId, reference, transferId)
              .catch((e: unknown) => deps.log.error({ err: (e as Error).message, transferId }, 'could not release a reference'));
          }
          throw err;
        }
      }
      const existing = claim.existing;
      if (!existing.sameRequest) throw new AppError('REFERENCE_CONFLICT');
      if (existing.answeredAt) {
        const original = await deps.store.get(existing.transferId);
        if (original) return { transfer: original, replayed: true };
      }
      if (Date.now() > deadline) throw new AppError('SERVICE_UNAVAILABLE', SEND_MESSAGES.duplicateInFlight);
      await sleep(step);
      step = Math.min(250, Math.round(step * 1.5));
    }
  }

  /**
   * The checks and the saga of one send. With `progress` (a send whose `reference` is not claimed
   * yet), the statement that records the transfer claims the reference too, and `progress.recorded`
   * says whether it did record it (null while unknown).
   */
  private async process(companyId: string, apiKeyId: string | null, transferId: string, cmd: SendCommand, progress?: SendProgress): Promise<TransferRecord> {
    const { deps } = this;
    const { rail, amount, company } = cmd;

    // 1. caps
    if (amount > RAIL_CAPS[rail]) throw new AppError(CAP_ERROR[rail]);
    // 2. compliance needs the holder's document on every BREB send
    if (rail === 'BREB' && !cmd.targetDocument) throw new AppError('TARGET_DOCUMENT_REQUIRED');
    // 3. AML (the payer company, the destination party and, for ACH, the destination account) and
    // 4. the destination: two independent reads, made at once; their verdicts are taken in this order,
    // so the answer is the same as when they ran one after the other.
    const counterpartyRaw = cmd.destination.kind === 'ACH' ? cmd.destination.documentNumber : cmd.targetDocument!;
    const account = amlAccountOf(deps, cmd);
    const [aml, checked] = await Promise.allSettled([
      deps.store.amlHit(sendAmlCandidates(company.nit, counterpartyRaw, account)),
      checkDestination(cmd, directLookups(deps, companyId)),
    ]);
    if (aml.status === 'rejected') throw aml.reason;
    if (aml.value) throw new AppError('RECIPIENT_BLACKLISTED');
    if (checked.status === 'rejected') throw checked.reason;
    const { destination, targetName } = checked.value;
    // The fee is not known yet: the ledger computes it in the Reserve (from the company's schedule,
    // as ComputeFees would) and the acceptance records it (one statement: docs/benchmarks.md).
    const fee = unknownFee(company.ivaApplicable);
    const now = deps.now();
    // ACH: the account screened above (the same canonical form); Bre-B: the key the directory resolved.
    const destinationFingerprint = account ?? deps.destinationFingerprint(destination);
    // 5. the company's approval policy (docs/policies.md): allow, ask for approvals, or refuse.
    const verdict = await decidePolicy(deps, {
      companyId,
      multiSigThreshold: company.multiSigThreshold,
      amount,
      rail,
      counterparty: cmd.counterparty,
      destinationFingerprint,
      at: now,
    });
    const { decision } = verdict;
    if (decision.action === 'REFUSE') throw policyRefusal(decision);
    const approval = approvalOf(deps, decision, now);
    const record: TransferRecord = {
      id: transferId,
      companyId,
      apiKeyId,
      rail,
      state: 'RECEIVED',
      amount,
      fee,
      targetName,
      targetDocument: cmd.destination.kind === 'ACH' ? cmd.destination.documentNumber : cmd.targetDocument!,
      reference: cmd.reference,
      description: cmd.description,
      destination,
      holdId: null,
      providerTransferId: null,
      errorMessage: null,
      dispatchAttempts: 0,
      approval,
      approvedAt: null,
      releaseEvent: null,
      rejectedBy: null,
      createdAt: now,
      dispatchedAt: null,
      completedAt: null,
      destinationFingerprint,
      policyDecision: decision,
    };
    try {
      return await this.accept(record, cmd, counterpartyRaw, progress);
    } catch (err) {
      // Refused before it was accepted: the day's total no longer counts it (a no-op without a cumulative rule).
      if (!(err instanceof AcceptedThenFailed)) {
        await verdict.release().catch((e: unknown) => deps.log.warn({ transferId, err: (e as Error).message }, 'could not give back the policy day total'));
        throw err;
      }
      throw err.cause;
    }
  }

  /** 6. counterparty limits, claimed by the statement that records the transfer; 7. the reserve and the acceptance; 8. the dispatch. */
  private async accept(record: TransferRecord, cmd: SendCommand, counterpartyRaw: string, progress: SendProgress | undefined): Promise<TransferRecord> {
    const { deps } = this;
    const { id: transferId, companyId, rail, amount, approval } = record;
    const { company } = cmd;
    const limits = effectiveLimits(
      { daily: company.counterpartyDailyLimitCents, monthly: company.counterpartyMonthlyLimitCents },
      { daily: deps.settings.counterpartyDailyLimit, monthly: deps.settings.counterpartyMonthlyLimit },
    );
    const graceMs = deps.settings.sweeperGraceSeconds * 1000;
    if (progress) progress.recorded = null;
    const inserted = await deps.store.insertWithinLimits(
      record,
      normalizeDocument(counterpartyRaw),
      bogotaWindows(record.createdAt),
      limits,
      graceMs,
      cmd.idempotencyKey ? { key: cmd.idempotencyKey, requestHash: cmd.requestHash } : undefined,
      progress ? { requestHash: cmd.requestHash, windowSeconds: deps.settings.idempotencyWindowSeconds } : undefined,
    );
    if (progress) progress.recorded = inserted === 'OK';
    if (inserted === IDEMPOTENCY_KEY_TAKEN) throw new IdempotencyKeyTaken();
    if (inserted === REFERENCE_TAKEN) throw new ReferenceTaken();
    if (inserted !== 'OK') throw new AppError(inserted as 'COUNTERPARTY_DAILY_LIMIT_EXCEEDED' | 'COUNTERPARTY_MONTHLY_LIMIT_EXCEEDED');

    // 7. balance: reserve amount + fee + IVA (one conditional statement in the ledger)
    let holdId: string;
    let reservedFee: FeeBreakdown;
    try {
      ({ holdId, fee: reservedFee } = await reserveSend(deps, record));
    } catch (err) {
      if (err instanceof AppError && err.code === 'RESERVE_VOIDED') {
        // The sweeper gave this transfer up (ABANDONING) and fenced its reserve: never accepted.
        deps.log.warn({ transferId }, 'reserve refused: the transfer was given up while it was in flight');
        throw new AppError('SERVICE_UNAVAILABLE', SEND_MESSAGES.ledgerUnknown);
      }
      if (err instanceof AppError && err.code !== 'SERVICE_UNAVAILABLE' && err.code !== 'INTERNAL_ERROR') {
        await this.saga.apply(record, 'reserve_refused', 'request', { rejectCode: err.code, reason: err.code, nextAttemptInMs: null });
        throw err;
      }
      // The reserve may or may not have landed: the transfer stays RECEIVED and is never sent; the
      // sweeper gives it up after the grace period (voiding the reserve, or releasing a hold that landed).
      deps.log.warn({ transferId, err: (err as Error).message }, 'ledger reserve outcome unknown; left for the sweeper');
      throw new AppError('SERVICE_UNAVAILABLE', SEND_MESSAGES.ledgerUnknown);
    }
    const accepted = approval
      ? await this.saga.apply(record, 'awaiting_approval', 'request', {
          holdId,
          fee: reservedFee,
          approval,
          nextAttemptInMs: Math.max(0, approval.expiresAt.getTime() - deps.now().getTime()),
          reason: `threshold ${approval.threshold}`,
        })
      : await this.saga.apply(record, 'reserved', 'request', { holdId, fee: reservedFee, nextAttemptInMs: graceMs, dispatchIntent: true });
    if (!accepted) {
      // The sweeper won ABANDONING while the reserve was in flight: it owns the transfer now and
      // releases this hold (its void finds the reserve). The loser of the race moves no money.
      deps.log.warn({ transferId }, 'reserve landed after the transfer was given up; the sweeper releases it');
      throw new AppError('SERVICE_UNAVAILABLE', SEND_MESSAGES.ledgerUnknown);
    }
    if (approval) {
      deps.log.info({ transferId, companyId, approvalId: approval.id, threshold: approval.threshold }, 'transfer awaiting approval (funds reserved)');
      return accepted;
    }
    deps.log.info({ transferId, companyId, rail, amount: amount.toString() }, 'transfer accepted (funds reserved)');
    // 8. dispatch: DISPATCHED, or still RESERVED (rail unreachable: retried), or FAILED (rail refused it)
    try {
      return await this.saga.dispatch(accepted, 'request', { intentRecorded: true });
    } catch (err) {
      throw new AcceptedThenFailed(err);
    }
  }
}

/**
 * A single send's Reserve, the ledger computing the fee. A ledger from before `compute_fee` (a
 * rolling deploy that reached the transfer first) refuses it for want of `fee`, on validation, so
 * nothing landed under the key: the fee is then computed first and sent, as before.
 */
async function reserveSend(deps: TransferDeps, record: TransferRecord): Promise<{ holdId: string; fee: FeeBreakdown }> {
  try {
    return await deps.ledger.reserve(reserveCommandOf(record, { computeFee: true }));
  } catch (err) {
    if (!(err instanceof AppError && err.code === 'INVALID_REQUEST' && wantsFee(err.details))) throw err;
    deps.log.warn({ transferId: record.id }, 'the ledger does not compute fees in Reserve yet: computing it first');
    const fee = await deps.ledger.computeFees(record.companyId, record.rail, record.amount, record.fee.ivaApplicable);
    return deps.ledger.reserve(reserveCommandOf({ ...record, fee }));
  }
}

const wantsFee = (details: unknown): boolean =>
  Array.isArray((details as { fields?: unknown })?.fields) && (details as { fields: Array<{ path?: unknown }> }).fields.some((f) => f.path === 'fee');

/** An error after the send was accepted (its dispatch): the policy's day total keeps counting it. */
class AcceptedThenFailed extends Error {
  constructor(override readonly cause: unknown) {
    super('accepted, then failed');
  }
}

/** The policy's verdict, or the multi-signature threshold's where no policy book is wired (unit tests of the saga). */
async function decidePolicy(deps: TransferDeps, p: PaymentToDecide): Promise<PolicyVerdict> {
  if (deps.policies) return deps.policies.decide(p);
  return { decision: thresholdDecision(p.multiSigThreshold), release: async () => {} };
}

/** A REFUSE decision as the client sees it: 422 POLICY_REFUSED naming the rule, the company's code and message. */
export function policyRefusal(d: PolicyDecision): AppError {
  return new AppError('POLICY_REFUSED', undefined, {
    policyVersion: d.policyVersion,
    ruleId: d.ruleId,
    code: d.code,
    ...(d.message ? { message: d.message } : {}),
  });
}

/** The approval a REQUIRE_APPROVALS decision opens (null otherwise). */
export function approvalOf(deps: TransferDeps, d: PolicyDecision, now: Date): ApprovalRef | null {
  if (d.action !== 'REQUIRE_APPROVALS') return null;
  return {
    id: deps.newApprovalId(),
    threshold: d.approvals,
    expiresAt: new Date(now.getTime() + deps.settings.approvalTtlSeconds * 1000),
    roles: d.roles,
  };
}

/** A send's fee before its Reserve (recorded with RECEIVED; the acceptance writes the reserved one). */
function unknownFee(ivaApplicable: boolean): FeeBreakdown {
  return { fixedFee: 0n, variableFee: 0n, subtotalFee: 0n, ivaApplicable, ivaAmount: 0n, totalCharged: 0n };
}
