import { maskAccount, type Logger } from '@wallet/platform';
import type { Rail } from '../domain/rails.js';
import type { AchDestination, TransferRecord } from '../domain/transfer.js';
import type { AchPrenotePort, DispatchResult, PrenoteRequest, PrenoteStatus, PrenoteSubmission, RailPort, RailStatus } from '../app/ports.js';
import { mapBounded } from '../app/map-bounded.js';
import { callJson, field, str, type HttpOutcome } from './http.js';
import { meterRailCall } from './rail-metrics.js';

/** The most transfers one bulk submission carries (the sandbox's limit; a batch's dispatch page is 200). */
export const MAX_BULK_DISPATCH = 200;
/** How many single dispatches run at once when a rail does not take a bulk submission. */
const SINGLE_FALLBACK_CONCURRENCY = 16;

/**
 * The Bre-B rail and the ACH rail over HTTP (docs/sandbox.md). Dispatch is idempotent on
 * `transactionId` (= the transfer id) at the rail, so retrying after any failure is safe.
 */
export class HttpRails implements RailPort, AchPrenotePort {
  constructor(
    private readonly urls: { breb: string; ach: string },
    private readonly timeoutMs: number,
    private readonly log: Logger,
  ) {}

  private base(rail: Rail): string {
    return (rail === 'BREB' ? this.urls.breb : this.urls.ach).replace(/\/$/, '');
  }

  async dispatch(t: TransferRecord, callbackUrl: string): Promise<DispatchResult> {
    const out = await meterRailCall(t.rail, 'dispatch', () => callJson('POST', this.submissionUrl(t.rail), this.submission(t, callbackUrl), this.timeoutMs));
    return this.dispatchResult(t, out);
  }

  /**
   * A batch's page in bulk submissions (docs/sandbox.md "Bulk submission"): per rail, up to
   * MAX_BULK_DISPATCH transfers in one `POST …/transfers/bulk`, each transfer's line read as its own
   * answer to `dispatch`. A call that failed as a whole answers every transfer in it alike: unreachable,
   * time-out or 5xx → unavailable (the sweeper retries; the rail dedupes on the transfer id), and a rail
   * without bulk submission (404, 405) or that refused the call itself (another 4xx but 408 and 429) → each
   * transfer on its own.
   */
  async dispatchMany(items: ReadonlyArray<{ t: TransferRecord; callbackUrl: string }>): Promise<DispatchResult[]> {
    const results = new Array<DispatchResult>(items.length);
    const chunks: Array<Array<{ i: number; t: TransferRecord; callbackUrl: string }>> = [];
    for (const rail of ['BREB', 'ACH'] as const) {
      const mine = items.flatMap((x, i) => (x.t.rail === rail ? [{ i, ...x }] : []));
      for (let k = 0; k < mine.length; k += MAX_BULK_DISPATCH) chunks.push(mine.slice(k, k + MAX_BULK_DISPATCH));
    }
    await Promise.all(
      chunks.map(async (chunk) => {
        const rail = chunk[0]!.t.rail;
        const body = { transfers: chunk.map((x) => this.submission(x.t, x.callbackUrl)) };
        const out = await meterRailCall(rail, 'dispatch_bulk', () => callJson('POST', `${this.submissionUrl(rail)}/bulk`, body, this.timeoutMs));
        const lines = out.kind === 'response' && out.status === 200 ? field(out.body, 'results') : undefined;
        if (Array.isArray(lines) && lines.length === chunk.length) {
          chunk.forEach((x, k) => {
            const line: unknown = lines[k];
            const status = field(line, 'status');
            results[x.i] =
              field(line, 'transactionId') === x.t.id && typeof status === 'number'
                ? this.dispatchResult(x.t, { kind: 'response', status, body: line })
                : this.malformed(x.t, 'rail answered a bulk line that is not this transfer');
          });
          return;
        }
        if (out.kind === 'response' && out.status >= 400 && out.status < 500 && out.status !== 408 && out.status !== 429) {
          this.log.warn({ rail, status: out.status, transfers: chunk.length }, 'rail did not take a bulk submission; dispatching each transfer on its own');
          await mapBounded(chunk, SINGLE_FALLBACK_CONCURRENCY, async (x) => {
            results[x.i] = await this.dispatch(x.t, x.callbackUrl);
          });
          return;
        }
        for (const x of chunk) {
          results[x.i] =
            out.kind === 'response' && out.status === 200
              ? this.malformed(x.t, 'malformed bulk answer')
              : this.dispatchResult(x.t, out.kind === 'error' || out.status >= 408 ? out : { kind: 'response', status: 502, body: null });
        }
      }),
    );
    return results;
  }

  private submissionUrl(rail: Rail): string {
    return rail === 'BREB' ? `${this.base('BREB')}/breb/rail/transfers` : `${this.base('ACH')}/ach/transfers`;
  }

  private submission(t: TransferRecord, callbackUrl: string): Record<string, unknown> {
    const d = t.destination;
    return d.kind === 'BREB'
      ? {
          transactionId: t.id,
          amountCents: Number(t.amount),
          anchorHandle: d.anchorHandle,
          keyType: d.keyType,
          keyValue: d.keyValue,
          targetName: t.targetName,
          targetDocument: t.targetDocument,
          callbackUrl,
        }
      : { transactionId: t.id, amountCents: Number(t.amount), ...achAccount(d), callbackUrl };
  }

  /** An answer we cannot read: it may have been taken (ambiguous); the sweeper asks the rail. */
  private malformed(t: TransferRecord, error: string): DispatchResult {
    this.log.warn({ transferId: t.id, rail: t.rail }, error);
    return { outcome: 'unavailable', ambiguous: true, error };
  }

  private dispatchResult(t: TransferRecord, out: HttpOutcome): DispatchResult {
    const where = { transferId: t.id, rail: t.rail, ...(t.destination.kind === 'ACH' ? { account: maskAccount(t.destination.accountNumber) } : {}) };
    if (out.kind === 'error') {
      this.log.warn({ ...where, error: out.error, ambiguous: out.ambiguous }, 'rail unreachable at dispatch');
      return { outcome: 'unavailable', ambiguous: out.ambiguous, error: out.error };
    }
    if (out.status >= 200 && out.status < 300) {
      const providerTransferId = str(field(out.body, 'providerTransferId'));
      if (providerTransferId) return { outcome: 'accepted', providerTransferId };
      this.log.warn({ ...where, status: out.status }, 'rail accepted without a providerTransferId');
      return { outcome: 'unavailable', ambiguous: true, error: 'malformed rail answer' };
    }
    if (out.status === 400) {
      // The rail refused a request our own validation accepted: our defect or the rail's; someone must look.
      this.log.error({ ...where, status: out.status, fields: fieldPaths(out.body) }, 'rail refused the shape of a dispatch our validation accepted');
      return { outcome: 'rejected', message: RAIL_MESSAGES.requestRefused };
    }
    if (out.status >= 400 && out.status < 500 && out.status !== 408 && out.status !== 429) {
      const message =
        str(field(out.body, 'message')) ?? str(field(out.body, 'errorMessage')) ?? str(field(out.body, 'error')) ?? `rechazada por la red (${out.status})`;
      this.log.warn({ ...where, status: out.status }, 'rail rejected the transfer at dispatch');
      return { outcome: 'rejected', message };
    }
    // 503: the rail says it did not take it. Other 5xx / 408 / 429: it may have.
    this.log.warn({ ...where, status: out.status }, 'rail unavailable at dispatch');
    return { outcome: 'unavailable', ambiguous: out.status !== 503, error: `http ${out.status}` };
  }

  async status(rail: Rail, transferId: string): Promise<RailStatus> {
    const url =
      rail === 'BREB'
        ? `${this.base('BREB')}/breb/rail/transfers/${encodeURIComponent(transferId)}`
        : `${this.base('ACH')}/ach/transfers/${encodeURIComponent(transferId)}`;
    const out = await meterRailCall(rail, 'status', () => callJson('GET', url, undefined, this.timeoutMs), [404]);
    if (out.kind === 'error') return { unavailable: true, error: out.error };
    if (out.status === 404) return { found: false };
    if (out.status !== 200) return { unavailable: true, error: `http ${out.status}` };
    const status = str(field(out.body, 'status'));
    if (status !== 'PENDING' && status !== 'COMPLETED' && status !== 'FAILED') return { unavailable: true, error: 'malformed status' };
    return {
      found: true,
      status,
      providerTransferId: str(field(out.body, 'providerTransferId')) ?? '',
      errorMessage: str(field(out.body, 'errorMessage')),
    };
  }

  async validateAchAccount(d: AchDestination): Promise<{ result: 'valid' } | { result: 'invalid'; message: string } | { result: 'unavailable' }> {
    const out = await meterRailCall(
      'ACH',
      'validate_account',
      () => callJson('POST', `${this.base('ACH')}/ach/accounts/validate`, achAccount(d), this.timeoutMs),
      [422],
    );
    if (out.kind === 'error') {
      this.log.warn({ error: out.error, account: maskAccount(d.accountNumber) }, 'ACH rail unreachable at account validation');
      return { result: 'unavailable' };
    }
    if (out.status >= 200 && out.status < 300 && field(out.body, 'valid') !== false) return { result: 'valid' };
    if (out.status === 400) {
      // The rail refused a request our own validation accepted (e.g. an account length the reference
      // allows): our defect or the rail's, so it is an error someone must look at, and the client
      // gets the documented code with a message that says what happened.
      this.log.error(
        { status: out.status, account: maskAccount(d.accountNumber), fields: fieldPaths(out.body) },
        'ACH rail refused the shape of an account validation our validation accepted',
      );
      return { result: 'invalid', message: RAIL_MESSAGES.accountRefused };
    }
    if (out.status === 422 || (out.status >= 200 && out.status < 300)) {
      return { result: 'invalid', message: str(field(out.body, 'message')) ?? RAIL_MESSAGES.accountInvalid };
    }
    this.log.warn({ status: out.status, account: maskAccount(d.accountNumber) }, 'ACH rail unavailable at account validation');
    return { result: 'unavailable' };
  }

  /** POST /ach/prenotes: 202 taken (a repeat answers 202 too), 4xx refused, else unavailable. */
  async submitPrenote(p: PrenoteRequest, callbackUrl: string): Promise<PrenoteSubmission> {
    const body = {
      prenoteId: p.prenoteId,
      bankCode: p.bankAchCode,
      accountTypeId: p.accountTypeId,
      accountNumber: p.accountNumber,
      documentTypeId: p.documentTypeId,
      documentNumber: p.documentNumber,
      holderName: p.holderName,
      callbackUrl,
    };
    const out = await meterRailCall('ACH', 'prenote', () => callJson('POST', `${this.base('ACH')}/ach/prenotes`, body, this.timeoutMs), [400, 409]);
    const where = { prenoteId: p.prenoteId, account: maskAccount(p.accountNumber) };
    if (out.kind === 'error') {
      this.log.warn({ ...where, error: out.error }, 'ACH rail unreachable at prenote');
      return { outcome: 'unavailable', error: out.error };
    }
    if (out.status >= 200 && out.status < 300) return { outcome: 'accepted' };
    if (out.status >= 400 && out.status < 500 && out.status !== 408 && out.status !== 429) {
      this.log.error({ ...where, status: out.status, fields: fieldPaths(out.body) }, 'ACH rail refused a prenote our validation accepted');
      return { outcome: 'refused', code: str(field(out.body, 'error')) ?? `HTTP_${out.status}`, message: RAIL_MESSAGES.prenoteRefused };
    }
    this.log.warn({ ...where, status: out.status }, 'ACH rail unavailable at prenote');
    return { outcome: 'unavailable', error: `http ${out.status}` };
  }

  /** GET /ach/prenotes/{id}: it answers while the rail is down. */
  async prenoteStatus(prenoteId: string): Promise<PrenoteStatus> {
    const out = await meterRailCall(
      'ACH',
      'prenote_status',
      () => callJson('GET', `${this.base('ACH')}/ach/prenotes/${encodeURIComponent(prenoteId)}`, undefined, this.timeoutMs),
      [404],
    );
    if (out.kind === 'error') return { unavailable: true, error: out.error };
    if (out.status === 404) return { found: false };
    if (out.status !== 200) return { unavailable: true, error: `http ${out.status}` };
    const status = str(field(out.body, 'status'));
    if (status === 'PENDING') return { found: true, status };
    if (status === 'ACCEPTED' || status === 'REJECTED') {
      return { found: true, status, reasonCode: str(field(out.body, 'reasonCode')), reason: str(field(out.body, 'reason')) };
    }
    return { unavailable: true, error: 'malformed prenote status' };
  }
}

export const RAIL_MESSAGES = {
  prenoteRefused: 'La red ACH rechazó los datos de la cuenta para la prenotificación; verifíquelos o contacte a soporte.',
  accountInvalid: 'La red ACH indicó que la cuenta de destino no es válida.',
  accountRefused: 'La red ACH rechazó los datos de la cuenta de destino (número de cuenta o documento del titular); verifíquelos o contacte a soporte.',
  requestRefused: 'La red rechazó los datos de la transferencia; los fondos fueron liberados. Contacte a soporte.',
};

/** The field paths a provider's 400 names (never their values: they may hold account numbers). */
function fieldPaths(body: unknown): string[] {
  const fields = field(field(body, 'details'), 'fields');
  return Array.isArray(fields) ? fields.map((f) => str(field(f, 'path')) ?? '?').slice(0, 10) : [];
}

function achAccount(d: AchDestination) {
  return {
    bankCode: d.bankAchCode,
    accountTypeId: d.accountTypeId,
    accountNumber: d.accountNumber,
    documentTypeId: d.documentTypeId,
    documentNumber: d.documentNumber,
    holderName: `${d.holderFirstName} ${d.holderLastName}`,
  };
}
