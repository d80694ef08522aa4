import { AppError, invalidRequest, linkActiveSpanToSaga } from '@wallet/platform';
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
    if (json.type === 'ach.prenote') {
      if (cmd.rail !== 'ACH') throw invalidRequest([{ path: 'rail', message: 'a prenote outcome comes from the ACH rail' }]);
      if (!this.prenotes) throw new AppError('SERVICE_UNAVAILABLE');
      return this.prenotes.execute(json);
    }
    const body = parseBody(json);
    if (cmd.rail !== body.rail) throw invalidRequest([{ path: 'rail', message: 'does not match the callback body' }]);

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

function parseBody(b: Record<string, unknown>): CallbackBody {
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
  if (problems.length > 0) throw invalidRequest(problems);
  return {
    eventId: eventId!,
    transactionId: transactionId!.toLowerCase(),
    rail: rail as 'BREB' | 'ACH',
    status: status as 'COMPLETED' | 'FAILED',
    providerTransferId: s('providerTransferId'),
    errorMessage: s('errorMessage')?.slice(0, 1000) ?? null,
  };
}
