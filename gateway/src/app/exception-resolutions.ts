import { AppError, invalidRequest, type CallContext } from '@wallet/platform';
import { adminActor, type AdminPrincipal } from '../auth/admin-principal.js';
import { exceptionToApi } from '../api/admin/exceptions/presenters.js';
import type { AuditTrail } from '../audit/admin-audit.js';
import type { Outcome } from './admin-changes.js';
import type { ApprovalRequests } from './approval-requests.js';
import type { EXCEPTION_ACTIONS, MoneyExceptions, WireException } from './money-exceptions.js';

type ExceptionAction = (typeof EXCEPTION_ACTIONS)[number];

/**
 * The resolutions that need a second, independent operator when a named operator asks: each posts a
 * correcting entry (write_off, credit, accept_provider, return) or closes the case on a person's
 * reading of it (dismiss, explain). `retry` and `rerun` only ask the system to run again what it
 * would do anyway (a refused ledger step, a day's reconciliation), so one operator still does them.
 */
export const TWO_PERSON_EXCEPTION_ACTIONS: ReadonlySet<ExceptionAction> = new Set(['write_off', 'credit', 'accept_provider', 'return', 'dismiss', 'explain']);

export interface ResolveRequest {
  id: string;
  action: ExceptionAction;
  note: string;
}

/**
 * POST /admin/exceptions/{id}/resolve by who asks (docs/security.md, "The insider"; the table in
 * admin-changes.ts). A named operator's two-person resolution changes nothing at the owner: it
 * becomes an EXCEPTION_RESOLVE approval request (one open per exception), once the exception was
 * read and found OPEN with the action admitted for its kind — so a request that could only fail is
 * refused at once, with the owner's own answer (404, 400, 409). A second, independent operator's
 * approval resolves it at the owner as `operator:<requester>+operator:<approver>`. `retry`, `rerun`
 * and the shared development token resolve directly, as before.
 */
export class ExceptionResolutions {
  constructor(
    private readonly exceptions: MoneyExceptions,
    private readonly approvals: ApprovalRequests,
  ) {
    approvals.register('EXCEPTION_RESOLVE', async ({ request, approver, call }) => {
      const p = request.payload as { exceptionId: string; action: ExceptionAction; note: string };
      // Both people, as each is named alone (`adminActor`); 91 characters, within the owners' 200.
      const resolvedBy = `operator:${request.requestedBy}+${adminActor(approver)}`;
      try {
        const done = await this.exceptions.resolve({ id: p.exceptionId, action: p.action, note: p.note, resolvedBy }, call);
        return { result: { exception: exceptionToApi(done) } };
      } catch (err) {
        // Resolved by this very request already (the gateway stopped after the owner answered and
        // before the request was APPLIED; the approver approves again): APPLIED, not FAILED.
        if (err instanceof AppError && err.code === 'EXCEPTION_NOT_OPEN') {
          const now = await this.exceptions.find(p.exceptionId, call);
          if (now?.status === 'RESOLVED' && now.action === p.action && now.resolvedBy === resolvedBy) return { result: { exception: exceptionToApi(now) } };
        }
        throw err;
      }
    });
  }

  async resolve(input: ResolveRequest, by: AdminPrincipal, call: CallContext, audit: AuditTrail): Promise<Outcome<WireException>> {
    if (by.kind === 'operator' && TWO_PERSON_EXCEPTION_ACTIONS.has(input.action)) {
      await this.assertResolvable(input, call);
      return {
        approval: await this.approvals.request(
          {
            action: 'EXCEPTION_RESOLVE',
            targetId: input.id,
            payload: { exceptionId: input.id, action: input.action, note: input.note },
            dedupeKey: `exception:${input.id}`,
          },
          by,
          audit,
        ),
      };
    }
    await audit.requested();
    return { done: await this.exceptions.resolve({ ...input, resolvedBy: adminActor(by) }, call) };
  }

  /** What the owner would answer first, in its order: unknown (404), an action its kind does not admit (400), not OPEN (409). */
  private async assertResolvable(input: ResolveRequest, call: CallContext): Promise<void> {
    const exc = await this.exceptions.find(input.id, call);
    if (!exc) throw new AppError('EXCEPTION_NOT_FOUND');
    if (!exc.actions.includes(input.action)) throw invalidRequest([{ path: 'action', message: `Debe ser una de ${exc.actions.join(', ')} para ${exc.kind}.` }]);
    if (exc.status !== 'OPEN') throw new AppError('EXCEPTION_NOT_OPEN');
  }
}
