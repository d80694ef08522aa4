import { centsToNumber, type CallContext, type Database, type Logger } from '@wallet/platform';
import type { ledgerV1, transferV1 } from '@wallet/proto';
import type { AdminPrincipal } from '../auth/admin-principal.js';
import type { DashboardAuth, DashboardRole, InvitedDashboardUser } from '../auth/dashboard-auth.js';
import { toPublic, type Operator, type OperatorAuth } from '../auth/operator-auth.js';
import { feeConfigToApi, type ApiFeeOperation } from '../api/wallets/presenters.js';
import type { ApiKeyRecord, Scope } from '../persistence/api-key.store.js';
import type { Company, CompanyPatch } from '../persistence/company.store.js';
import type { Queryable } from '../persistence/sql.js';
import { amlEntryToApi } from '../api/transfers/presenters.js';
import type { TransferClient } from '../clients/transfer-client.js';
import type { AuditTrail } from '../audit/admin-audit.js';
import type { ApiKeyAdmin } from './api-key-admin.js';
import type { ApprovalRequest, ApprovalRequests } from './approval-requests.js';
import { companyNotices, type CompanyAdmin } from './company-admin.js';
import type { CredentialDelivery } from './credential-delivery.js';
import type { LedgerAdmin } from './ledger-admin.js';
import { adminSecurityActor as actorOf, type SecurityNotices } from './security-notices.js';

/** Either the change was made (with the credentials to show, outside production), or it waits for a second operator. */
export type Outcome<T> = { approval: ApprovalRequest } | { done: T; credentials?: Record<string, string> };

/**
 * Which admin changes need two people (docs/security.md, "The insider", I1), in one place. A named operator's
 * sensitive change becomes an approval request (approval-requests.ts); the appliers below make it
 * once a second, independent operator approves. The shared token acts directly only where it still
 * may (development; in production it only bootstraps the first operators). Every change to a
 * company's threshold, users or keys tells the company (`company.security_changed` + e-mail), and
 * every credential goes to its owner (CredentialDelivery).
 *
 * | change | one operator | two operators |
 * |---|---|---|
 * | company: raise the threshold, tighten limits, suspend, tax regime, rate multiplier | ✓ | |
 * | company: lower the threshold, loosen a counterparty limit, reactivate | | ✓ (delay) |
 * | API key READ | ✓ (to the company's admins) | |
 * | API key WRITE | | ✓ (delay) |
 * | dashboard user | | ✓ (delay; the invitation to the user) |
 * | operator invitation | | ✓ (delay; the token to the invitee) |
 * | disabling an operator | | ✓ |
 * | fee schedule | | ✓ |
 * | AML: add an entry / remove one | ✓ / | / ✓ (delay) |
 * | credit | up to the running totals (credit-request-admin.ts) | above |
 * | money exception: `retry`, `rerun` / `write_off`, `credit`, `accept_provider`, `return`, `dismiss`, `explain` (exception-resolutions.ts) | ✓ / | / ✓ |
 */
export class AdminChanges {
  constructor(
    private readonly db: Database,
    private readonly approvals: ApprovalRequests,
    private readonly deps: {
      companies: CompanyAdmin;
      keys: ApiKeyAdmin;
      dashboard: DashboardAuth;
      operators: OperatorAuth;
      ledger: LedgerAdmin;
      transfer: TransferClient;
      delivery: CredentialDelivery;
      notices: SecurityNotices;
    },
    private readonly log: Logger,
  ) {
    this.registerAppliers();
  }

  // ───────────── companies ─────────────

  async updateCompany(id: string, patch: CompanyPatch, by: AdminPrincipal, audit: AuditTrail): Promise<Outcome<Company>> {
    const before = await this.deps.companies.get(id);
    const loosened = loosenedControls(before, patch);
    if (by.kind === 'operator' && loosened.length > 0) {
      const payload = patchToJson(patch);
      return {
        approval: await this.approvals.request(
          {
            action: 'COMPANY_UPDATE',
            companyId: id,
            payload,
            dedupeKey: `company:${id}`,
            summary: `Se solicitó aflojar controles de la empresa (${loosened.join(', ')}); requiere la aprobación de un segundo operador.`,
          },
          by,
          audit,
        ),
      };
    }
    const after = await this.tx(async (tx) => {
      const changed = await this.deps.companies.patchWithin(tx, id, patch);
      await audit.record(tx, { targets: { companyId: id }, before: changed.before, after: changed.after });
      await this.tellCompanyUpdated(tx, changed.before, changed.after, by, null);
      return changed.after;
    });
    this.deps.companies.forgetCached(id);
    return { done: after };
  }

  // ───────────── API keys ─────────────

  async issueApiKey(companyId: string, input: { scope: Scope; label: string }, by: AdminPrincipal, audit: AuditTrail): Promise<Outcome<ApiKeyRecord>> {
    await this.deps.companies.assertExists(companyId);
    if (by.kind === 'operator' && input.scope === 'WRITE') {
      return {
        approval: await this.approvals.request(
          {
            action: 'API_KEY_ISSUE',
            companyId,
            payload: { scope: input.scope, label: input.label },
            dedupeKey: `api-key:${companyId}:${input.scope}:${input.label}`,
            summary: `Se solicitó una clave de API ${input.scope} ("${input.label}"); requiere la aprobación de un segundo operador.`,
          },
          by,
          audit,
        ),
      };
    }
    return this.tx(async (tx) => {
      const out = await this.issueKeyWithin(tx, companyId, input, by, null);
      await audit.record(tx, { targets: { companyId, keyId: out.done.id }, before: null, after: out.done });
      return out;
    });
  }

  private async issueKeyWithin(tx: Queryable, companyId: string, input: { scope: Scope; label: string }, by: AdminPrincipal, approvalRequestId: string | null) {
    const issued = await this.deps.keys.issueWithin(tx, companyId, input.scope, input.label);
    const credentials = await this.deps.delivery.apiKey(tx, companyId, { id: issued.id, key: issued.key, scope: issued.scope, label: issued.label });
    await this.deps.notices.record(tx, {
      companyId,
      change: 'API_KEY_ISSUED',
      summary: `Se emitió una clave de API ${issued.scope} ("${issued.label}", ${issued.prefix}…).`,
      actor: actorOf(by),
      approvalRequestId,
      details: { keyId: issued.id, scope: issued.scope, label: issued.label, prefix: issued.prefix },
    });
    const { key: _shownOnce, ...record } = issued;
    return { done: record as ApiKeyRecord, ...(credentials ? { credentials } : {}) };
  }

  // ───────────── dashboard users ─────────────

  /**
   * A dashboard user: by an operator always an invitation (the user chooses the password and the
   * authenticator; no operator holds either), and only once a second operator approves. The
   * development token keeps the direct enrolment of CONTRACT §4.
   */
  async addDashboardUser(
    companyId: string,
    input: { email: string; role: DashboardRole },
    by: AdminPrincipal,
    audit: AuditTrail,
  ): Promise<Outcome<InvitedDashboardUser>> {
    await this.deps.companies.assertExists(companyId);
    const email = input.email.trim().toLowerCase();
    if (by.kind === 'operator') {
      return {
        approval: await this.approvals.request(
          {
            action: 'DASHBOARD_USER_ADD',
            companyId,
            payload: { email, role: input.role },
            dedupeKey: `dashboard-user:${email}`,
            summary: `Se solicitó dar acceso al panel a ${email} con el rol ${input.role}; requiere la aprobación de un segundo operador.`,
          },
          by,
          audit,
        ),
      };
    }
    return this.tx(async (tx) => {
      const out = await this.inviteUserWithin(tx, companyId, { email, role: input.role }, by, null);
      await audit.record(tx, { targets: { companyId, userId: out.done.id }, before: null, after: withoutLink(out.done) });
      return out;
    });
  }

  /** A new invitation for a user who has not activated: the link goes to the user (never to the operator in production). */
  async reinviteDashboardUser(
    companyId: string,
    userId: string,
    audit: AuditTrail,
  ): Promise<{ done: InvitedDashboardUser; credentials?: Record<string, string> }> {
    return this.tx(async (tx) => {
      const user = await this.deps.dashboard.reinviteUser(companyId, userId, tx);
      const credentials = await this.deps.delivery.dashboardInvitation(tx, companyId, user);
      await audit.record(tx, { targets: { companyId, userId }, after: withoutLink(user) });
      return { done: user, ...(credentials ? { credentials } : {}) };
    });
  }

  private async inviteUserWithin(
    tx: Queryable,
    companyId: string,
    input: { email: string; role: DashboardRole },
    by: AdminPrincipal,
    approvalRequestId: string | null,
  ) {
    const user = await this.deps.dashboard.inviteUser(companyId, input, tx);
    const credentials = await this.deps.delivery.dashboardInvitation(tx, companyId, user);
    await this.deps.notices.record(tx, {
      companyId,
      change: 'USER_ADDED',
      summary: `Se invitó a ${user.email} al panel con el rol ${user.role}.`,
      actor: actorOf(by),
      approvalRequestId,
      details: { userId: user.id, email: user.email, role: user.role },
    });
    return { done: user, ...(credentials ? { credentials } : {}) };
  }

  // ───────────── operators ─────────────

  async inviteOperator(
    input: { name: string; email: string },
    by: AdminPrincipal,
    audit: AuditTrail,
  ): Promise<Outcome<Operator & { enrollmentExpiresAt: string }>> {
    const email = input.email.trim().toLowerCase();
    if (by.kind === 'operator') {
      return {
        approval: await this.approvals.request(
          { action: 'OPERATOR_INVITE', payload: { name: input.name, email }, dedupeKey: `operator-invite:${email}` },
          by,
          audit,
        ),
      };
    }
    // The shared token (bootstrap in production; development): OperatorAuth enforces when it may.
    return this.tx(async (tx) => {
      const op = await this.deps.operators.invite(tx, { name: input.name, email }, by, audit);
      const credentials = await this.deps.delivery.operatorEnrollment(tx, op);
      return { done: toPublic(op), ...(credentials ? { credentials } : {}) };
    });
  }

  async disableOperator(id: string, by: AdminPrincipal, audit: AuditTrail): Promise<Outcome<Operator>> {
    await this.deps.operators.assertExists(id);
    if (by.kind === 'operator') {
      return {
        approval: await this.approvals.request(
          { action: 'OPERATOR_DISABLE', targetId: id, payload: { operatorId: id }, dedupeKey: `operator-disable:${id}` },
          by,
          audit,
        ),
      };
    }
    return { done: await this.deps.operators.disable(id, by, audit) };
  }

  // ───────────── fees, AML ─────────────

  async setFee(
    input: { operation: ApiFeeOperation; fixedFeeCents: number; variableBps: number; companyId?: string },
    by: AdminPrincipal,
    call: CallContext,
    audit: AuditTrail,
  ): Promise<Outcome<ledgerV1.FeeConfig>> {
    if (input.companyId !== undefined) await this.deps.companies.assertExists(input.companyId);
    if (by.kind === 'operator') {
      return {
        approval: await this.approvals.request(
          {
            action: 'FEE_SET',
            companyId: input.companyId ?? null,
            payload: { ...input },
            dedupeKey: `fee:${input.operation}:${input.companyId ?? 'default'}`,
            summary: `Se solicitó cambiar la tarifa ${input.operation}: ${input.fixedFeeCents} centavos fijos + ${input.variableBps} pb; requiere la aprobación de un segundo operador.`,
          },
          by,
          audit,
        ),
      };
    }
    await audit.requested();
    return { done: await this.deps.ledger.setFee(input.operation, input.fixedFeeCents, input.variableBps, input.companyId, call) };
  }

  async removeAmlEntry(id: string, by: AdminPrincipal, call: CallContext, audit: AuditTrail): Promise<Outcome<transferV1.AmlEntry>> {
    if (by.kind === 'operator') {
      return {
        approval: await this.approvals.request({ action: 'AML_REMOVE', targetId: id, payload: { entryId: id }, dedupeKey: `aml-remove:${id}` }, by, audit),
      };
    }
    await audit.requested();
    return { done: await this.deps.transfer.removeAmlEntry({ id }, call) };
  }

  /** A transaction whose notices and mails go out right after it commits (the sender and relay also poll). */
  private async tx<T>(fn: (q: Queryable) => Promise<T>): Promise<T> {
    const out = await this.db.tx(fn);
    this.deps.notices.nudge();
    return out;
  }

  // ───────────── appliers: the approved change, made once ─────────────

  private registerAppliers(): void {
    const a = this.approvals;
    a.register('COMPANY_UPDATE', async ({ request, approver, q }) => {
      const patch = patchFromJson(request.payload);
      const changed = await this.deps.companies.patchWithin(q, request.companyId!, patch);
      await this.tellCompanyUpdated(q, changed.before, changed.after, approver, request.id);
      this.deps.companies.forgetCached(request.companyId!);
      return { result: { company: companyJson(changed.after) } };
    });
    a.register('API_KEY_ISSUE', async ({ request, approver, q }) => {
      const p = request.payload as { scope: Scope; label: string };
      const out = await this.issueKeyWithin(q, request.companyId!, p, approver, request.id);
      return { result: { apiKey: out.done }, ...(out.credentials ? { credentials: out.credentials } : {}) };
    });
    a.register('DASHBOARD_USER_ADD', async ({ request, approver, q }) => {
      const p = request.payload as { email: string; role: DashboardRole };
      const out = await this.inviteUserWithin(q, request.companyId!, p, approver, request.id);
      return { result: { user: withoutLink(out.done) }, ...(out.credentials ? { credentials: out.credentials } : {}) };
    });
    a.register('OPERATOR_INVITE', async ({ request, q }) => {
      const p = request.payload as { name: string; email: string };
      // The requester is the inviter: the chain that independence checks runs through them.
      const op = await this.deps.operators.inviteWithin(q, p, request.requestedBy);
      const credentials = await this.deps.delivery.operatorEnrollment(q, op);
      return { result: { operator: toPublic(op) }, ...(credentials ? { credentials } : {}) };
    });
    a.register('OPERATOR_DISABLE', async ({ request, approver, q }) => {
      const { after } = await this.deps.operators.disableWithin(q, request.targetId!, approver.operatorId);
      return { result: { operator: after } };
    });
    a.register('FEE_SET', async ({ request, approver, call, q }) => {
      const p = request.payload as { operation: ApiFeeOperation; fixedFeeCents: number; variableBps: number; companyId?: string };
      const fee = await this.deps.ledger.setFee(p.operation, p.fixedFeeCents, p.variableBps, p.companyId, call);
      if (p.companyId) {
        await this.deps.notices.record(q, {
          companyId: p.companyId,
          change: 'FEES_CHANGED',
          summary: `Cambió la tarifa ${p.operation}: ${p.fixedFeeCents} centavos fijos + ${p.variableBps} pb.`,
          actor: actorOf(approver),
          approvalRequestId: request.id,
          details: { ...p },
        });
      }
      return { result: { fee: feeConfigToApi(fee) } };
    });
    a.register('AML_REMOVE', async ({ request, call }) => {
      const entry = await this.deps.transfer.removeAmlEntry({ id: request.targetId! }, call);
      return { result: { entry: amlEntryToApi(entry) } };
    });
  }

  private async tellCompanyUpdated(q: Queryable, before: Company, after: Company, by: AdminPrincipal, approvalRequestId: string | null): Promise<void> {
    if (before.multiSigThreshold !== after.multiSigThreshold) {
      await this.deps.notices.record(q, {
        companyId: after.id,
        change: 'MULTISIG_THRESHOLD_CHANGED',
        summary: `El umbral de firmas de la empresa pasó de ${before.multiSigThreshold} a ${after.multiSigThreshold}.`,
        actor: actorOf(by),
        approvalRequestId,
        details: { from: before.multiSigThreshold, to: after.multiSigThreshold },
      });
    }
    for (const notice of companyNotices(before, after, actorOf(by))) await this.deps.notices.record(q, { ...notice, approvalRequestId });
  }
}

function withoutLink(u: InvitedDashboardUser) {
  const { invitationUrl: _link, ...rest } = u;
  return rest;
}

/**
 * What in a patch weakens a control: a lower multi-signature threshold, reactivating a suspended
 * company, or a counterparty limit
 * that is not a strict tightening of a limit already set (0 means "the platform default", so
 * setting or clearing a limit may loosen it).
 */
export function loosenedControls(before: Company, patch: CompanyPatch): string[] {
  const out: string[] = [];
  if (patch.multiSigThreshold !== undefined && patch.multiSigThreshold < before.multiSigThreshold) out.push('multiSigThreshold');
  // A suspension is a control too: lifting it takes two.
  if (patch.status === 'ACTIVE' && before.status === 'SUSPENDED') out.push('status');
  const tightening = (old: bigint, next: bigint) => old > 0n && next > 0n && next <= old;
  if (
    patch.counterpartyDailyLimitCents !== undefined &&
    patch.counterpartyDailyLimitCents !== before.counterpartyDailyLimitCents &&
    !tightening(before.counterpartyDailyLimitCents, patch.counterpartyDailyLimitCents)
  )
    out.push('counterpartyDailyLimitCents');
  if (
    patch.counterpartyMonthlyLimitCents !== undefined &&
    patch.counterpartyMonthlyLimitCents !== before.counterpartyMonthlyLimitCents &&
    !tightening(before.counterpartyMonthlyLimitCents, patch.counterpartyMonthlyLimitCents)
  )
    out.push('counterpartyMonthlyLimitCents');
  return out;
}

function patchToJson(p: CompanyPatch): Record<string, unknown> {
  return Object.fromEntries(
    Object.entries(p)
      .filter(([, v]) => v !== undefined)
      .map(([k, v]) => [k, typeof v === 'bigint' ? v.toString() : v]),
  );
}

function patchFromJson(j: Record<string, unknown>): CompanyPatch {
  const p = { ...j } as Record<string, unknown>;
  for (const k of ['counterpartyDailyLimitCents', 'counterpartyMonthlyLimitCents']) if (typeof p[k] === 'string') p[k] = BigInt(p[k] as string);
  return p as CompanyPatch;
}

function companyJson(c: Company): Record<string, unknown> {
  return {
    ...c,
    counterpartyDailyLimitCents: centsToNumber(c.counterpartyDailyLimitCents),
    counterpartyMonthlyLimitCents: centsToNumber(c.counterpartyMonthlyLimitCents),
  };
}
