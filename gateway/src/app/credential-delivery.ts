import { AppError, type Logger } from '@wallet/platform';
import type { InvitedDashboardUser } from '../auth/dashboard-auth.js';
import type { InvitedOperator } from '../auth/operator-auth.js';
import type { Queryable } from '../persistence/sql.js';
import type { MailOutbox } from './mail-outbox.js';
import { activeCompanyAdmins } from './security-notices.js';

/**
 * Credentials reach only their owner (docs/security.md, "The insider", I1). An enrolment token goes to the invited operator,
 * an invitation link to the invited dashboard user, a new API key to the company's active
 * dashboard administrators — by e-mail, through the durable mail outbox, written in the same
 * transaction as the credential (so it is sent exactly when the credential exists). In production
 * the operator who created it never sees it: each method returns nothing. Outside production the
 * credential is also returned, so the local demo and the README keep printing working credentials.
 */
export class CredentialDelivery {
  constructor(
    private readonly mail: MailOutbox,
    private readonly opts: { production: boolean },
    private readonly log: Logger,
  ) {}

  async operatorEnrollment(q: Queryable, op: InvitedOperator): Promise<{ enrollmentToken: string } | undefined> {
    await this.mail.enqueue(q, {
      to: op.email,
      kind: 'operator-enrollment',
      companyId: null,
      subject: 'Invitación como operador de Billetera Pagos',
      text: [
        `Hola ${op.name}:`,
        '',
        'Fue invitado como operador de la administración de Billetera Pagos. Para activar su acceso, registre su contraseña',
        'y su autenticador con este código de registro (POST /admin/auth/enroll, campo enrollmentToken):',
        '',
        `    ${op.enrollmentToken}`,
        '',
        `El código sirve una sola vez y vence el ${op.enrollmentExpiresAt}. Nadie más lo ha visto: no lo comparta.`,
        'Si no esperaba esta invitación, avise a su equipo de seguridad.',
      ].join('\n'),
    });
    this.log.info({ operatorId: op.id }, 'operator enrolment token e-mailed to the invitee');
    return this.opts.production ? undefined : { enrollmentToken: op.enrollmentToken };
  }

  async dashboardInvitation(q: Queryable, companyId: string, user: InvitedDashboardUser): Promise<{ invitationUrl: string } | undefined> {
    await this.mail.enqueue(q, {
      to: user.email,
      kind: 'dashboard-invitation',
      companyId,
      subject: 'Invitación al panel de Billetera Pagos',
      text: [
        'Hola:',
        '',
        `Fue invitado al panel de su empresa en Billetera Pagos con el rol ${user.role}. Abra este enlace para elegir su contraseña`,
        'y registrar su autenticador:',
        '',
        `    ${user.invitationUrl}`,
        '',
        `El enlace sirve una sola vez y vence el ${user.invitationExpiresAt}. Si no esperaba esta invitación, avise al administrador de su empresa.`,
      ].join('\n'),
    });
    this.log.info({ userId: user.id, companyId }, 'dashboard invitation e-mailed to the user');
    return this.opts.production ? undefined : { invitationUrl: user.invitationUrl };
  }

  /**
   * A new API key goes to every active ADMIN of the company's dashboard; none → 409
   * COMPANY_ADMIN_REQUIRED in production (the key is not created: nobody could receive it).
   */
  async apiKey(q: Queryable, companyId: string, key: { id: string; key: string; scope: string; label: string }): Promise<{ key: string } | undefined> {
    const admins = await activeCompanyAdmins(q, companyId);
    if (admins.length === 0 && this.opts.production) throw new AppError('COMPANY_ADMIN_REQUIRED');
    for (const a of admins) {
      await this.mail.enqueue(q, {
        to: a.email,
        kind: 'api-key',
        companyId,
        subject: `Nueva clave de API (${key.scope}) para su empresa`,
        text: [
          'Hola:',
          '',
          `Se emitió una clave de API con alcance ${key.scope} y etiqueta "${key.label}" para su empresa. Guárdela ahora en su gestor de secretos;`,
          'no se puede volver a consultar:',
          '',
          `    ${key.key}`,
          '',
          'Si no la pidió, revóquela desde la administración y avise a su equipo de seguridad.',
        ].join('\n'),
      });
    }
    this.log.info({ companyId, keyId: key.id, recipients: admins.length }, 'API key e-mailed to the company administrators');
    return this.opts.production ? undefined : { key: key.key };
  }
}
