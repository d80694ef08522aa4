import { AppError, addSagaLink, invalidRequest, linkActiveSpanToSaga } from '@wallet/platform';
import { verifySignature } from '@wallet/platform';
import type { TransferDeps } from './deps.js';
import type { ApplyPrenoteCallback } from './prenote-callback.js';
import type { ProviderOutcome, StepResult, TransferSaga } from './transfer-saga.js';
import { isUuid } from './validation.js';

export interface RailCallbackCommand {
  rail: string;
  rawBody: Buffer;
  signature: string;
}

export interface RailCallbackResult {
  accepted: boolean;
  duplicate: boolean;
}

interface CallbackBody {
  eventId: string;
  transactionId: string;
  providerTransferId: string | null;
  rail: 'BREB' | 'ACH';
  status: 'COMPLETED' | 'FAILED';
  errorMessage: string | null;
}

/**
 * A provider's outcome callback, passed through by the gateway untouched (POST /webhooks/rails/{rail}).
 * Authenticated by the HMAC over the raw bytes and a 300 s clock tolerance; idempotent by the
 * provider's event id and by the transfer's state (a second outcome for a finished transfer changes
 * nothing). COMPLETED commits the hold, FAILED releases it with the rail's message.
 */
export class HandleRailCallback {
  constructor(
    private readonly deps: TransferDeps,
    private readonly saga: TransferSaga,
    /** ACH prenote outcomes (`type: "ach.prenote"`): counterparties' verifications. */
    private readonly prenotes?: ApplyPrenoteCallback,
  ) {}

  async execute(cmd: RailCallbackCommand): Promise<RailCallbackResult> {
    const { deps } = this;
    if (!cmd.signature) throw new AppError('INVALID_SIGNATURE', 'Falta la firma del proveedor (X-Provider-Signature).');
    const verdict = verifySignature(deps.settings.callbackSecret, cmd.rawBody, cmd.signature, Math.floor(deps.now().getTime() / 1000));
    if (verdict !== 'OK') {
      deps.log.warn({ verdict, rail: cmd.rail }, 'rail callback refused');
      throw new AppError(
        'INVALID_SIGNATURE',
        verdict === 'STALE' ? 'La firma del proveedor expiró (marca de tiempo fuera de tolerancia).' : 'La firma del proveedor no es válida.',
      );
    }
    const json = parseObject(cmd.rawBody);
    if (json.type === BULK_TYPE) return this.executeMany(cmd.rail, json);
    if (json.type === 'ach.prenote') {
      if (cmd.rail !== 'ACH') throw invalidRequest([{ path: 'rail', message: 'a prenote outcome comes from the ACH rail' }]);
      if (!this.prenotes) throw new AppError('SERVICE_UNAVAILABLE');
      return this.prenotes.execute(json);
    }
    const body = parseBody(json);
    if (cmd.rail !== body.rail) throw invalidRequest([{ path: 'rail', message: 'does not match the callback body' }]);
    return this.applyOne(body);
  }

  /**
   * A page of outcomes in one callback (docs/sandbox.md "Bulk outcomes"): every outcome is checked
   * first (the page is refused as a whole when one is malformed or of another rail). The COMPLETED
   * ones for transfers in the common case go through the saga in bulk (`completeMany`: one statement
   * to COMPLETING, one ledger CommitBatch, one to COMPLETED); every other outcome, and any the bulk
   * move did not win, through the single path, each on its own. An outcome that fails there does not
   * stop the others; the first such failure is the page's answer once all were tried, so the provider
   * sends the page again, and what was applied answers as a repeat.
   */
  private async executeMany(rail: string, json: Record<string, unknown>): Promise<RailCallbackResult> {
    const bodies = parseMany(json);
    const wrongRail = bodies.findIndex((b) => b.rail !== rail);
    if (wrongRail >= 0) throw invalidRequest([{ path: `outcomes.${wrongRail}.rail`, message: 'does not match the callback rail' }]);
    // A transfer's first COMPLETED outcome in the page; a second one for it is a repeat, taken singly.
    const inBulk = new Map<string, CallbackBody>();
    for (const b of bodies) if (b.status === 'COMPLETED' && !inBulk.has(b.transactionId)) inBulk.set(b.transactionId, b);
    const finished = await this.saga.completeMany(
      [...inBulk.values()].map((b) => ({ id: b.transactionId, rail: b.rail, providerTransferId: b.providerTransferId, callbackEventId: b.eventId })),
    );
    const won = new Set((finished ?? []).map((t) => t.id));
    for (const t of finished ?? []) addSagaLink(t.traceparent, { 'wallet.transfer_id': t.id });
    let duplicates = 0;
    let failure: unknown;
    for (const b of bodies) {
      if (inBulk.get(b.transactionId) === b && won.has(b.transactionId)) continue;
      try {
        const r = await this.applyOne(b);
        if (r.duplicate || !r.accepted) duplicates++;
      } catch (err) {
        failure ??= err;
      }
    }
    if (failure) throw failure;
    this.deps.log.info({ rail, outcomes: bodies.length, inBulk: won.size }, 'rail outcomes handled');
    return { accepted: true, duplicate: duplicates === bodies.length };
  }

  /** One outcome, checked. */
  private async applyOne(body: CallbackBody): Promise<RailCallbackResult> {
    const { deps } = this;
    const outcome = {
      source: 'callback' as const,
      status: body.status,
      providerTransferId: body.providerTransferId,
      errorMessage: body.errorMessage,
      callbackEventId: body.eventId,
    };
    // The common case in one statement (COMPLETED for a DISPATCHED transfer of this rail, never
    // seen); anything else reads the transfer first.
    const r =
      (body.status === 'COMPLETED' ? await this.saga.completeUnread(body.transactionId, body.rail, outcome) : undefined) ??
      (await this.readAndApply(body, outcome));
    // The callback is a trace of its own (the provider's request): tie it to the send's.
    linkActiveSpanToSaga(typeof r === 'object' ? r.transfer.traceparent : undefined, { 'wallet.transfer_id': body.transactionId });
    if (r === 'duplicate') return { accepted: true, duplicate: true };
    if (r === 'unknown') return { accepted: false, duplicate: false };
    deps.log.info({ transferId: r.transfer.id, rail: body.rail, status: body.status, applied: r.applied, state: r.transfer.state }, 'rail callback handled');
    return { accepted: true, duplicate: !r.applied };
  }

  /** The general path: the transfer read (with the callback's "seen"), checked, then the saga's outcome. */
  private async readAndApply(body: CallbackBody, outcome: ProviderOutcome): Promise<StepResult | 'duplicate' | 'unknown'> {
    const { deps } = this;
    let t;
    if (deps.store.getForCallback) {
      const r = await deps.store.getForCallback(body.eventId, body.transactionId);
      if (r.seen) return 'duplicate';
      t = r.transfer;
    } else {
      if (await deps.store.callbackSeen(body.eventId)) return 'duplicate';
      t = await deps.store.get(body.transactionId);
    }
    if (!t) {
      // Not one of ours (we dispatch only what we recorded): acknowledge so the provider stops retrying.
      deps.log.warn({ rail: body.rail, transactionId: body.transactionId }, 'rail callback for an unknown transaction ignored');
      return 'unknown';
    }
    if (t.rail !== body.rail) throw invalidRequest([{ path: 'rail', message: 'is not the rail of this transaction' }]);
    // A transfer is dispatched only after RESERVED is recorded, so RECEIVED here means a provider
    // ahead of our own record: ask it to retry (it does, with back-off).
    if (t.state === 'RECEIVED') throw new AppError('SERVICE_UNAVAILABLE');

    // Every outcome goes through the saga's table: applied, a harmless repeat, or a contradiction
    // (COMPLETED for a transfer we released, FAILED for one we completed), which opens a money
    // exception and is logged as an error; none is dropped silently.
    const r = body.status === 'COMPLETED' ? await this.saga.complete(t, outcome) : await this.saga.railFailed(t, outcome);
    if (!r.applied) await deps.store.recordCallback(body.eventId, t.id, t.rail, body.status);
    return r;
  }
}

function parseObject(raw: Buffer): Record<string, unknown> {
  try {
    const parsed: unknown = JSON.parse(raw.toString('utf8'));
    if (!parsed || typeof parsed !== 'object' || Array.isArray(parsed)) throw new Error('not an object');
    return parsed as Record<string, unknown>;
  } catch {
    throw invalidRequest([{ path: 'rawBody', message: 'is not a JSON object' }]);
  }
}

/** The `type` of a page of outcomes in one callback. */
export const BULK_TYPE = 'rail.outcomes';
/** At most this many outcomes in one callback. */
export const MAX_OUTCOMES = 1000;

/** A page's outcomes, each checked as a single callback's body; problems under `outcomes.<i>.`. */
function parseMany(json: Record<string, unknown>): CallbackBody[] {
  const list = json.outcomes;
  if (!Array.isArray(list) || list.length === 0 || list.length > MAX_OUTCOMES) {
    throw invalidRequest([{ path: 'outcomes', message: `must be a list of 1 to ${MAX_OUTCOMES} outcomes` }]);
  }
  const problems: Array<{ path: string; message: string }> = [];
  const bodies: CallbackBody[] = [];
  list.forEach((item: unknown, i) => {
    if (!item || typeof item !== 'object' || Array.isArray(item)) {
      problems.push({ path: `outcomes.${i}`, message: 'must be an outcome object' });
      return;
    }
    const found = bodyProblems(item as Record<string, unknown>);
    if (Array.isArray(found)) problems.push(...found.map((p) => ({ path: `outcomes.${i}.${p.path}`, message: p.message })));
    else bodies.push(found);
  });
  if (problems.length > 0) throw invalidRequest(problems.slice(0, 50));
  return bodies;
}

function parseBody(b: Record<string, unknown>): CallbackBody {
  const found = bodyProblems(b);
  if (Array.isArray(found)) throw invalidRequest(found);
  return found;
}

function bodyProblems(b: Record<string, unknown>): CallbackBody | Array<{ path: string; message: string }> {
  const problems: Array<{ path: string; message: string }> = [];
  const s = (k: string) => (typeof b[k] === 'string' && (b[k] as string).length > 0 ? (b[k] as string) : null);
  const eventId = s('eventId');
  const transactionId = s('transactionId');
  const rail = s('rail');
  const status = s('status');
  if (!eventId || eventId.length > 200) problems.push({ path: 'eventId', message: 'is required' });
  if (!transactionId || !isUuid(transactionId)) problems.push({ path: 'transactionId', message: 'must be a transaction id' });
  if (rail !== 'BREB' && rail !== 'ACH') problems.push({ path: 'rail', message: 'must be BREB or ACH' });
  if (status !== 'COMPLETED' && status !== 'FAILED') problems.push({ path: 'status', message: 'must be COMPLETED or FAILED' });
  if (problems.length > 0) return problems;
  return {
    eventId: eventId!,
    transactionId: transactionId!.toLowerCase(),
    rail: rail as 'BREB' | 'ACH',
    status: status as 'COMPLETED' | 'FAILED',
    providerTransferId: s('providerTransferId'),
    errorMessage: s('errorMessage')?.slice(0, 1000) ?? null,
  };
}
