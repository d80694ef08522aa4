import { AppError, type CallContext } from '@wallet/platform';
import { collectKeyV1, depositV1, reconciliationV1, transferV1, type exceptionsV1 } from '@wallet/proto';
import type { CollectKeyClient } from '../clients/collect-key-client.js';
import type { DepositClient } from '../clients/deposit-client.js';
import type { ReconciliationClient } from '../clients/reconciliation-client.js';
import type { TransferClient } from '../clients/transfer-client.js';

/**
 * The kinds each owning service keeps, as its proto declares them (`…ExceptionKind`: the wire text
 * is the value's name without the prefix, which is the generated enum's member name).
 */
type KindOf<E> = Exclude<keyof E, 'UNSPECIFIED' | 'UNRECOGNIZED'> & string;
const kindsOf = <E extends Record<string, string>>(e: E): readonly KindOf<E>[] =>
  Object.keys(e).filter((k) => k !== 'UNSPECIFIED' && k !== 'UNRECOGNIZED') as KindOf<E>[];
export const TRANSFER_KINDS = kindsOf(transferV1.TransferExceptionKind);
export const DEPOSIT_KINDS = kindsOf(depositV1.DepositExceptionKind);
/** Inbound Bre-B payments: CREDIT_REFUSED is the same kind as PSE's (the ledger refused a credit both ask for). */
export const COLLECT_KEY_KINDS = kindsOf(collectKeyV1.CollectKeyExceptionKind);
export const RECONCILIATION_KINDS = kindsOf(reconciliationV1.ReconciliationExceptionKind);
export const EXCEPTION_KINDS = [...new Set([...TRANSFER_KINDS, ...DEPOSIT_KINDS, ...COLLECT_KEY_KINDS, ...RECONCILIATION_KINDS])];
/** Resolutions of the reconciliation's exceptions: no other service's kind admits them. */
export const RECONCILIATION_ACTIONS = ['accept_provider', 'explain', 'rerun'] as const;
export const EXCEPTION_ACTIONS = ['write_off', 'credit', 'retry', 'return', 'dismiss', ...RECONCILIATION_ACTIONS] as const;

export type WireException = exceptionsV1.MoneyException;
/** What every owner's client answers alike. */
type ExceptionLister = {
  listExceptions(req: exceptionsV1.ListExceptionsRequest, call: CallContext): Promise<exceptionsV1.ListExceptionsResponse>;
};

/** Newest first, then by id descending: the order each service lists in (opened_at is kept to the millisecond). */
const newestFirst = (a: WireException, b: WireException) =>
  (b.openedAt?.getTime() ?? 0) - (a.openedAt?.getTime() ?? 0) || (a.id < b.id ? 1 : a.id > b.id ? -1 : 0);

export interface ExceptionListQuery {
  status?: string | undefined;
  kind?: string | undefined;
  limit: number;
  cursor?: string | undefined;
  movement?: string | undefined;
}

export interface ResolveExceptionInput {
  id: string;
  action: (typeof EXCEPTION_ACTIONS)[number];
  note: string;
  resolvedBy: string;
}

/**
 * Money exceptions (CONTRACT §10): provider outcomes that contradict our state, for an operator to
 * resolve. Each owning service keeps its own (transfer: payouts; pse-deposit: PSE collections;
 * collect-key: inbound Bre-B payments; reconciliation: the breaks between a provider's settlement
 * report and our books); the listing merges them with one cursor that all of them understand (the
 * last item's opened_at and id), and a resolution goes to the owner of the exception.
 */
export class MoneyExceptions {
  constructor(
    private readonly owners: { transfers: TransferClient; deposits: DepositClient; recon: ReconciliationClient; collectKeys?: CollectKeyClient | undefined },
    private readonly opts: { rerunDeadlineMs: number },
  ) {}

  /** One page, newest first, across every owner; `nextCursor` pages on. */
  async list(query: ExceptionListQuery, call: CallContext): Promise<{ items: WireException[]; nextCursor: string | null }> {
    const { transfers, deposits, recon, collectKeys } = this.owners;
    const q = {
      limit: query.limit,
      ...(query.status ? { status: query.status } : {}),
      ...(query.kind ? { kind: query.kind } : {}),
      ...(query.cursor ? { cursor: query.cursor } : {}),
      ...(query.movement ? { movement: query.movement } : {}),
    };
    // A kind filter asks only the service that keeps that kind.
    const none = { items: [] as WireException[], nextCursor: undefined };
    const asks = (kinds: readonly string[]) => !query.kind || kinds.includes(query.kind);
    const [t, d, r, c] = await Promise.all([
      asks(TRANSFER_KINDS) ? transfers.listExceptions(q, call) : none,
      asks(DEPOSIT_KINDS) ? deposits.listExceptions(q, call) : none,
      asks(RECONCILIATION_KINDS) ? recon.listExceptions(q, call) : none,
      collectKeys && asks(COLLECT_KEY_KINDS) ? collectKeys.listExceptions(q, call) : none,
    ]);
    const merged = [...t.items, ...d.items, ...r.items, ...c.items].sort(newestFirst);
    const items = merged.slice(0, query.limit);
    const last = items[items.length - 1];
    // More after this page: items of one list were cut here, or a service said it has more.
    const nextCursor =
      (merged.length > query.limit || t.nextCursor || d.nextCursor || r.nextCursor || c.nextCursor) && last
        ? Buffer.from(`${last.openedAt!.toISOString()}|${last.id}`).toString('base64url')
        : null;
    return { items, nextCursor };
  }

  /**
   * One exception by its id, wherever it is kept: each owner is asked for that id alone (ListExceptions'
   * `id`), all at once. An owner from before that filter answers its first page instead (it ignores the
   * field); its answer is then looked through page by page, as the gateway did before every owner had it,
   * so a rolling upgrade never reads an exception as missing.
   */
  async find(id: string, call: CallContext): Promise<WireException | undefined> {
    const { transfers, deposits, recon, collectKeys } = this.owners;
    const owners: ExceptionLister[] = [transfers, deposits, recon, ...(collectKeys ? [collectKeys] : [])];
    const asked = await Promise.allSettled(
      owners.map(async (owner) => {
        const page = await owner.listExceptions({ limit: 1, id }, call);
        if (page.items.every((e) => e.id === id)) return page.items[0];
        return this.scan(owner, id, call);
      }),
    );
    const hit = asked.find((r): r is PromiseFulfilledResult<WireException> => r.status === 'fulfilled' && r.value !== undefined)?.value;
    // An owner that cannot answer matters only when no other keeps the exception: then it might be its.
    const failed = asked.find((r): r is PromiseRejectedResult => r.status === 'rejected');
    if (!hit && failed) throw failed.reason;
    return hit;
  }

  /** An owner's whole listing, 100 at a time, until the id is found (an owner that does not filter by id). */
  private async scan(owner: ExceptionLister, id: string, call: CallContext): Promise<WireException | undefined> {
    let cursor: string | undefined;
    do {
      const page = await owner.listExceptions({ limit: 100, ...(cursor ? { cursor } : {}) }, call);
      const hit = page.items.find((e) => e.id === id);
      if (hit) return hit;
      cursor = page.nextCursor;
    } while (cursor);
    return undefined;
  }

  /**
   * Resolves an exception at its owner. Which service keeps the id is known from the action: the
   * reconciliation's actions are admitted by its kinds only, the others by transfer's and
   * pse-deposit's. So the owner is asked first (one round trip in the common case); the others are
   * asked, in turn, only when it has no such exception (a wrong action for the exception's kind, then
   * answered by its owner as a 400 naming the actions it admits; or an unknown id, 404). An owner
   * answers EXCEPTION_NOT_FOUND before anything else, so asking the wrong one changes nothing.
   */
  async resolve(req: ResolveExceptionInput, call: CallContext): Promise<WireException> {
    const { transfers, deposits, recon, collectKeys } = this.owners;
    const resolveAt = {
      transfer: () => transfers.resolveException(req, call),
      deposit: () => deposits.resolveException(req, call),
      reconciliation: () => recon.resolveException(req, call, req.action === 'rerun' ? { deadlineMs: this.opts.rerunDeadlineMs } : undefined),
      collectKey: () => (collectKeys ? collectKeys.resolveException(req, call) : Promise.reject(new AppError('EXCEPTION_NOT_FOUND'))),
    };
    const order = (RECONCILIATION_ACTIONS as readonly string[]).includes(req.action)
      ? [resolveAt.reconciliation, resolveAt.transfer, resolveAt.deposit, resolveAt.collectKey]
      : [resolveAt.transfer, resolveAt.deposit, resolveAt.collectKey, resolveAt.reconciliation];
    for (const [i, resolve] of order.entries()) {
      try {
        return await resolve();
      } catch (err) {
        if (!(err instanceof AppError && err.code === 'EXCEPTION_NOT_FOUND') || i === order.length - 1) throw err;
      }
    }
    throw new AppError('EXCEPTION_NOT_FOUND');
  }
}
