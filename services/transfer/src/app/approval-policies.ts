import { randomBytes, randomUUID } from 'node:crypto';
import { AppError, PolicyDocumentSchema, invalidRequest } from '@wallet/platform';
import { policyEventsV1 } from '@wallet/proto';
import type { PolicyDocumentJson } from '../domain/approval-policy.js';
import type { TransferDeps } from './deps.js';
import type { PolicyBook } from './policy-book.js';
import type { PolicyStore, PolicyVersionRecord } from './policy-ports.js';
import type { OutboxEvent, Signer } from './ports.js';
import { requireCompany } from './validation.js';

/** The subject of a policy change reaching its quorum (stream COMPANIES; docs/policies.md). */
export const POLICY_CHANGED_SUBJECT = 'company.policy_changed';

export const POLICY_VERSION_ID = /^apol_[a-z0-9]{24}$/;
const MAX_NOTE = 500;

export interface PolicyDeps extends TransferDeps {
  policyStore: PolicyStore;
  policies: PolicyBook;
  policySettings: {
    /** From the quorum to effective_at. */
    changeDelayMs: number;
  };
}

/** The policy as the company sees it: in force, scheduled, proposed, and what a change needs. */
export interface PolicyState {
  inForce: PolicyVersionRecord | null;
  scheduled: PolicyVersionRecord[];
  proposed: PolicyVersionRecord | null;
  changeQuorum: number;
  changeDelaySeconds: number;
}

/** `apol_` + 24 of [a-z0-9]. */
export function newPolicyVersionId(): string {
  const alphabet = 'abcdefghijklmnopqrstuvwxyz0123456789';
  return `apol_${[...randomBytes(24)].map((b) => alphabet[b % 36]).join('')}`;
}

/**
 * How many signatures a change needs, the proposer's included: the company's multi-signature
 * threshold, and never fewer than two (a policy is a control: no single person weakens it).
 */
export function changeQuorum(multiSigThreshold: number): number {
  return Math.max(2, multiSigThreshold);
}

/** Only the company's ADMINs propose, sign or cancel a change (the gateway checked their TOTP code). */
function requireAdmin(s: Signer): void {
  if (s.role !== 'ADMIN') throw new AppError('INSUFFICIENT_ROLE', 'Solo un administrador de la empresa puede cambiar la política de aprobación.');
}

/** The document as the API writes it, checked with the one schema the gateway serves (400 with every problem). */
export function parsePolicyDocument(json: string): PolicyDocumentJson {
  let raw: unknown;
  try {
    raw = JSON.parse(json);
  } catch {
    throw invalidRequest([{ path: 'policy', message: 'must be a JSON object' }]);
  }
  const parsed = PolicyDocumentSchema.safeParse(raw);
  if (!parsed.success) {
    throw invalidRequest(parsed.error.issues.map((i) => ({ path: ['policy', ...i.path.map(String)].join('.'), message: i.message })));
  }
  return parsed.data as PolicyDocumentJson;
}

const versionIdOf = (id: string): string => {
  if (!POLICY_VERSION_ID.test(id)) throw new AppError('POLICY_VERSION_NOT_FOUND');
  return id;
};

/** Reads: the policy's state and its versions, newest first. */
export class PolicyQueries {
  constructor(private readonly deps: PolicyDeps) {}

  async state(caller: string | undefined, multiSigThreshold: number): Promise<PolicyState> {
    const companyId = requireCompany(caller);
    const { deps } = this;
    const [versions, proposed] = await Promise.all([deps.policyStore.fromInstant(companyId, deps.now()), deps.policyStore.proposed(companyId)]);
    const now = deps.now().getTime();
    const inForce = versions.filter((v) => v.effectiveAt!.getTime() <= now).at(-1) ?? null;
    return {
      inForce,
      scheduled: versions.filter((v) => v.effectiveAt!.getTime() > now),
      proposed: proposed ?? null,
      changeQuorum: changeQuorum(multiSigThreshold),
      changeDelaySeconds: Math.round(deps.policySettings.changeDelayMs / 1000),
    };
  }

  async list(
    caller: string | undefined,
    q: { limit?: number; beforeVersion?: number | undefined },
  ): Promise<{ items: PolicyVersionRecord[]; nextBeforeVersion: number | null }> {
    const companyId = requireCompany(caller);
    const limit = q.limit && q.limit > 0 ? q.limit : 20;
    if (limit > 100) throw invalidRequest([{ path: 'limit', message: 'at most 100' }]);
    const rows = await this.deps.policyStore.list(companyId, limit + 1, q.beforeVersion && q.beforeVersion > 0 ? q.beforeVersion : null);
    const items = rows.slice(0, limit);
    return { items, nextBeforeVersion: rows.length > limit ? items[items.length - 1]!.version : null };
  }
}

/**
 * ProposeApprovalPolicy: a new version, PROPOSED with the proposer's signature. It decides nothing
 * until the quorum has signed and the delay has passed (SignApprovalPolicy). One proposal at a time.
 */
export class ProposePolicy {
  constructor(private readonly deps: PolicyDeps) {}

  async execute(
    caller: string | undefined,
    multiSigThreshold: number,
    signer: Signer,
    input: { documentJson: string; note?: string | undefined; precheck?: boolean },
  ): Promise<PolicyVersionRecord | null> {
    const companyId = requireCompany(caller);
    requireAdmin(signer);
    const document = parsePolicyDocument(input.documentJson);
    const note = input.note?.trim() || null;
    if (note && note.length > MAX_NOTE) throw invalidRequest([{ path: 'note', message: `at most ${MAX_NOTE} characters` }]);
    const { deps } = this;
    if (input.precheck) {
      if (await deps.policyStore.proposed(companyId)) throw new AppError('POLICY_CHANGE_PENDING');
      return null;
    }
    const out = await deps.policyStore.propose(companyId, newPolicyVersionId(), document, changeQuorum(multiSigThreshold), signer, note);
    if (out.kind === 'proposal_pending') throw new AppError('POLICY_CHANGE_PENDING');
    deps.log.info({ companyId, policyId: out.policy.id, version: out.policy.version, rules: document.rules.length }, 'approval policy proposed');
    return out.policy;
  }
}

/** SignApprovalPolicy: the signature that reaches the quorum approves the version, in force after the delay, and events it. */
export class SignPolicy {
  constructor(private readonly deps: PolicyDeps) {}

  async execute(caller: string | undefined, signer: Signer, input: { id: string; precheck?: boolean }): Promise<PolicyVersionRecord> {
    const companyId = requireCompany(caller);
    requireAdmin(signer);
    const id = versionIdOf(input.id);
    const { deps } = this;
    const out = await deps.policyStore.sign(companyId, id, signer, deps.policySettings.changeDelayMs, input.precheck === true, (p, previous) =>
      policyChangedEvent(p, previous, deps.traceparent()),
    );
    switch (out.kind) {
      case 'not_found':
        throw new AppError('POLICY_VERSION_NOT_FOUND');
      case 'already_signed':
        throw new AppError('ALREADY_SIGNED');
      case 'not_pending':
        throw new AppError('POLICY_CHANGE_NOT_PENDING');
      case 'may_sign':
        return (await deps.policyStore.get(companyId, id))!;
      case 'signed':
        break;
    }
    if (out.quorum) {
      deps.eventsWritten();
      deps.policies.forget(companyId);
      deps.log.info({ companyId, policyId: id, version: out.policy.version, effectiveAt: out.policy.effectiveAt }, 'approval policy approved');
    }
    return out.policy;
  }
}

/** CancelApprovalPolicy: a PROPOSED version is withdrawn by any ADMIN (keeping the policy in force changes no control). */
export class CancelPolicy {
  constructor(private readonly deps: PolicyDeps) {}

  async execute(caller: string | undefined, signer: Signer, input: { id: string; precheck?: boolean }): Promise<PolicyVersionRecord> {
    const companyId = requireCompany(caller);
    requireAdmin(signer);
    const out = await this.deps.policyStore.cancel(companyId, versionIdOf(input.id), signer, input.precheck === true);
    if (out.kind === 'not_found') throw new AppError('POLICY_VERSION_NOT_FOUND');
    if (out.kind === 'not_pending') throw new AppError('POLICY_CHANGE_NOT_PENDING');
    if (!input.precheck)
      this.deps.log.info({ companyId: out.policy.companyId, policyId: out.policy.id, by: signer.userId }, 'approval policy change cancelled');
    return out.policy;
  }
}

export function policyChangedEvent(p: PolicyVersionRecord, previousVersion: number, traceparent: string | undefined): OutboxEvent {
  const id = randomUUID();
  return {
    id,
    subject: POLICY_CHANGED_SUBJECT,
    payload: policyEventsV1.ApprovalPolicyChanged.toJSON({
      eventId: id,
      companyId: p.companyId,
      policyId: p.id,
      version: p.version,
      documentJson: JSON.stringify(p.document),
      effectiveAt: p.effectiveAt!,
      signedBy: p.signatures.map((s) => s.email),
      previousVersion,
      occurredAt: p.decidedAt ?? new Date(),
    }),
    ...(traceparent ? { traceparent } : {}),
  };
}
