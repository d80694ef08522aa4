import { randomUUID } from 'node:crypto';
import { appendOutbox } from '@wallet/platform';
import { companyEventsV1 } from '@wallet/proto';
import type { AdminPrincipal } from '../auth/admin-principal.js';
import { CompanyStore } from '../persistence/company.store.js';
import { DashboardUserStore } from '../persistence/dashboard-user.store.js';
import type { Queryable } from '../persistence/sql.js';
import type { MailOutbox } from './mail-outbox.js';

const companies = new CompanyStore();
const dashboardUsers = new DashboardUserStore();

export type SecurityChange =
  | 'MULTISIG_THRESHOLD_CHANGE_REQUESTED'
  | 'MULTISIG_THRESHOLD_CHANGED'
  | 'API_KEY_REQUESTED'
  | 'API_KEY_ISSUED'
  | 'API_KEY_REVOKED'
  | 'USER_REQUESTED'
  | 'USER_ADDED'
  | 'USER_DISABLED'
  | 'LIMITS_CHANGED'
  | 'FEES_CHANGE_REQUESTED'
  | 'FEES_CHANGED'
  | 'STATUS_CHANGED'
  | 'REQUEST_REJECTED';

export type SecurityActorKind = 'operator' | 'bootstrap-token' | 'dashboard-user' | 'api-key';

export interface SecurityNotice {
  companyId: string;
  change: SecurityChange;
  /** One sentence in Spanish for the company's people; never a secret (it goes out by e-mail and webhook). */
  summary: string;
  actor: { kind: SecurityActorKind; id: string | null };
  approvalRequestId?: string | null;
  /** When a requested change takes effect (RFC 3339), when not at once. */
  effectiveAt?: string | null;
  /** What changed (ids, values before and after); never a secret: it is in the event and the webhook. */
  details?: Record<string, unknown>;
}

/** Who made a change from /admin, as a notice names it (the shared token has no id). */
export function adminSecurityActor(p: AdminPrincipal | undefined): SecurityNotice['actor'] {
  return p?.kind === 'operator' ? { kind: 'operator', id: p.operatorId } : { kind: 'bootstrap-token', id: null };
}

/** The subject of the gateway's event (stream COMPANIES). */
export const SECURITY_CHANGED_SUBJECT = 'company.security_changed';
/** The `kind` of its e-mails in the mail outbox. */
export const SECURITY_MAIL_KIND = 'company.security_changed';

/** The change as the e-mail names it. */
export const SECURITY_CHANGE_LABELS: Record<SecurityChange, string> = {
  MULTISIG_THRESHOLD_CHANGE_REQUESTED: 'Solicitud de cambio del número de aprobaciones',
  MULTISIG_THRESHOLD_CHANGED: 'Cambio del número de aprobaciones',
  API_KEY_REQUESTED: 'Solicitud de una nueva clave de API',
  API_KEY_ISSUED: 'Nueva clave de API',
  API_KEY_REVOKED: 'Clave de API revocada',
  USER_REQUESTED: 'Solicitud de un nuevo usuario',
  USER_ADDED: 'Nuevo usuario',
  USER_DISABLED: 'Usuario deshabilitado',
  LIMITS_CHANGED: 'Cambio de límites',
  FEES_CHANGE_REQUESTED: 'Solicitud de cambio de tarifas',
  FEES_CHANGED: 'Cambio de tarifas',
  STATUS_CHANGED: 'Cambio de estado de la empresa',
  REQUEST_REJECTED: 'Solicitud rechazada',
};

const ACTOR_LABELS: Record<SecurityActorKind, string> = {
  operator: 'un operador de la plataforma',
  'bootstrap-token': 'la credencial de arranque de la plataforma',
  'dashboard-user': 'un usuario del panel de su empresa',
  'api-key': 'una clave de API de su empresa',
};

const when = new Intl.DateTimeFormat('es-CO', { timeZone: 'America/Bogota', dateStyle: 'long', timeStyle: 'short' });
const bogota = (d: Date) => `${when.format(d)} (hora de Colombia)`;
const escapeHtml = (s: string) => s.replace(/[&<>"']/g, (c) => ({ '&': '&amp;', '<': '&lt;', '>': '&gt;', '"': '&quot;', "'": '&#39;' })[c]!);

/**
 * "The company is told" (docs/security.md, that section): every change to a company's threshold, users, keys, limits,
 * fees or status is recorded in the transaction of the change as (1) a `company.security_changed`
 * event in the gateway's outbox (relayed to JetStream after commit; the webhook service delivers it
 * to the company's subscribed endpoints) and (2) an e-mail in the mail outbox to each active ADMIN
 * of the company's dashboard, so its own people can object while a change waits for its delay.
 * Neither carries a secret.
 */
export class SecurityNotices {
  constructor(
    private readonly mail: MailOutbox,
    private readonly wake: () => void = () => undefined,
  ) {}

  async record(tx: Queryable, n: SecurityNotice): Promise<void> {
    const occurredAt = new Date();
    const eventId = randomUUID();
    const effectiveAt = n.effectiveAt ? new Date(n.effectiveAt) : undefined;
    if (effectiveAt && Number.isNaN(effectiveAt.getTime())) throw new Error(`security notice: effectiveAt is not an instant: ${n.effectiveAt}`);
    const payload = companyEventsV1.CompanySecurityChanged.toJSON({
      eventId,
      companyId: n.companyId,
      change: n.change,
      summary: n.summary,
      actorKind: n.actor.kind,
      ...(n.actor.id ? { actorId: n.actor.id } : {}),
      ...(n.approvalRequestId ? { approvalRequestId: n.approvalRequestId } : {}),
      ...(effectiveAt ? { effectiveAt } : {}),
      detailsJson: JSON.stringify(n.details ?? {}),
      occurredAt,
    });
    await appendOutbox(tx, 'gateway', { id: eventId, subject: SECURITY_CHANGED_SUBJECT, payload });

    const companyName = await companies.nameOf(tx, n.companyId);
    const admins = await activeCompanyAdmins(tx, n.companyId);
    const mail = securityMail(companyName ?? 'su empresa', n, occurredAt, effectiveAt);
    for (const admin of admins) {
      await this.mail.enqueue(tx, { to: admin.email, ...mail, kind: SECURITY_MAIL_KIND, companyId: n.companyId });
    }
  }

  /** Asks the relay and the mail sender to look now (call after the transaction that recorded commits). */
  nudge(): void {
    this.wake();
    this.mail.nudge();
  }
}

/** The e-mail addresses of a company's active dashboard ADMINs: who is told, and who receives its new API keys. */
export async function activeCompanyAdmins(q: Queryable, companyId: string): Promise<Array<{ email: string }>> {
  return dashboardUsers.activeAdmins(q, companyId);
}

/** The e-mail of a notice, in Spanish; no secret, no link to act on (a change is objected to through the usual channels). */
export function securityMail(companyName: string, n: SecurityNotice, occurredAt: Date, effectiveAt?: Date): { subject: string; text: string; html: string } {
  const label = SECURITY_CHANGE_LABELS[n.change];
  const lines: Array<[string, string]> = [
    ['Cambio', label],
    ['Detalle', n.summary],
    ['Fecha', bogota(occurredAt)],
    ['Realizado por', ACTOR_LABELS[n.actor.kind]],
    ...(effectiveAt ? [['Entra en vigor', bogota(effectiveAt)] as [string, string]] : []),
    ...(n.approvalRequestId ? [['Solicitud de aprobación', n.approvalRequestId] as [string, string]] : []),
  ];
  const intro = `En la cuenta de ${companyName} en Billetera Pagos se registró este cambio de seguridad:`;
  const outro =
    'Si usted no reconoce este cambio, comuníquese de inmediato con soporte de Billetera Pagos' + (effectiveAt ? ' antes de que entre en vigor.' : '.');
  const text = [
    'Hola,',
    '',
    intro,
    '',
    ...lines.map(([k, v]) => `${k}: ${v}`),
    '',
    outro,
    '',
    'Recibe este correo porque es administrador de la empresa en el panel.',
    '',
  ].join('\n');
  const html =
    `<p>Hola,</p><p>${escapeHtml(intro)}</p><table>${lines.map(([k, v]) => `<tr><th align="left">${escapeHtml(k)}</th><td>${escapeHtml(v)}</td></tr>`).join('')}</table>` +
    `<p>${escapeHtml(outro)}</p><p><small>Recibe este correo porque es administrador de la empresa en el panel.</small></p>`;
  return { subject: `${label}: ${companyName}`, text, html };
}
