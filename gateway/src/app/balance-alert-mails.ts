import {
  balanceAlertCrossingOfEvent,
  balanceAlertEventView,
  InboxConsumer,
  type Bus,
  type Database,
  type Logger,
  type ReceivedEvent,
  type SqlTx,
} from '@wallet/platform';
import { walletEventsV1 } from '@wallet/proto';
import { CompanyStore } from '../persistence/company.store.js';
import type { MailOutbox } from './mail-outbox.js';
import { activeCompanyAdmins } from './security-notices.js';

const companies = new CompanyStore();

/** The `kind` of its e-mails in the mail outbox. */
export const BALANCE_ALERT_MAIL_KIND = 'wallet.balance_alert';
/** The gateway's durable consumer of the ledger's WALLETS stream (only `wallet.balance_*` make mails). */
export const BALANCE_ALERT_MAIL_CONSUMER = 'gateway-balance-alerts';

type AlertView = ReturnType<typeof balanceAlertEventView>;

const RAIL_LABELS: Record<AlertView['rail'], string> = { BREB: 'Bre-B', ACH: 'ACH' };

/** Centavos as Colombian pesos in a sentence: `5.000.000 COP` (centavos shown only when there are any: `1.234,50 COP`). */
export function copText(cents: bigint | number | string): string {
  const v = BigInt(cents);
  const abs = v < 0n ? -v : v;
  const pesos = (abs / 100n).toString().replace(/\B(?=(\d{3})+(?!\d))/g, '.');
  const frac = abs % 100n;
  return `${v < 0n ? '-' : ''}${pesos}${frac === 0n ? '' : `,${frac.toString().padStart(2, '0')}`} COP`;
}

const when = new Intl.DateTimeFormat('es-CO', { timeZone: 'America/Bogota', dateStyle: 'long', timeStyle: 'short' });
const escapeHtml = (s: string) => s.replace(/[&<>"']/g, (c) => ({ '&': '&amp;', '<': '&lt;', '>': '&gt;', '"': '&quot;', "'": '&#39;' })[c]!);

/** The e-mail of one crossing, in Spanish; no secret, no link to act on. */
export function balanceAlertMail(companyName: string, a: AlertView): { subject: string; text: string; html: string } {
  const wallet = `la billetera ${RAIL_LABELS[a.rail]}`;
  const available = copText(a.availableCents);
  const threshold = copText(a.thresholdCents);
  const margin = a.hysteresisCents > 0 ? ` (más el margen de ${copText(a.hysteresisCents)})` : '';
  const lowerMargin = a.hysteresisCents > 0 ? ` (menos el margen de ${copText(a.hysteresisCents)})` : '';
  const [title, sentence] = {
    LOW: ['Saldo bajo', `El saldo de ${wallet} está por debajo de ${threshold}: el disponible es ${available}.`],
    RECOVERED: ['Saldo recuperado', `El saldo de ${wallet} se recuperó: el disponible es ${available}, al menos el umbral de ${threshold}${margin}.`],
    HIGH: ['Saldo alto', `El saldo de ${wallet} está por encima de ${threshold}: el disponible es ${available}.`],
    NORMAL: ['Saldo de nuevo normal', `El saldo de ${wallet} volvió por debajo del umbral alto de ${threshold}${lowerMargin}: el disponible es ${available}.`],
  }[a.kind] as [string, string];
  const at = `${when.format(new Date(a.occurredAt))} (hora de Colombia)`;
  const intro = `En la cuenta de ${companyName} en Billetera Pagos:`;
  const outro = 'Puede cambiar o quitar esta alerta en el panel o con PUT /wallets/{rail}/alerts.';
  const footer = 'Recibe este correo porque es administrador de la empresa en el panel.';
  const text = ['Hola,', '', intro, '', sentence, '', `Fecha: ${at}`, '', outro, '', footer, ''].join('\n');
  const html =
    `<p>Hola,</p><p>${escapeHtml(intro)}</p><p><strong>${escapeHtml(sentence)}</strong></p><p>Fecha: ${escapeHtml(at)}</p>` +
    `<p>${escapeHtml(outro)}</p><p><small>${escapeHtml(footer)}</small></p>`;
  return { subject: `${title} en ${wallet}: ${companyName}`, text, html };
}

/**
 * E-mails the company's active dashboard ADMINs on every balance alert crossing (docs/balance-alerts.md):
 * a durable consumer of the ledger's WALLETS stream whose inbox row and mails commit in one
 * transaction (InboxConsumer), so a redelivered event mails nobody twice; the MailSender sends after commit.
 */
export class BalanceAlertMails {
  private consumer: InboxConsumer | undefined;

  constructor(
    private readonly db: Database,
    private readonly bus: Bus,
    private readonly mail: MailOutbox,
    private readonly log: Logger,
  ) {}

  /** The mails of one event (none for another `wallet.*` event), written in the consumer's transaction. */
  async handle(evt: ReceivedEvent, tx: SqlTx): Promise<number> {
    if (!evt.subject.startsWith('wallet.balance_')) return 0;
    let view: AlertView;
    let companyId: string;
    try {
      const e = walletEventsV1.WalletBalanceAlert.fromJSON(evt.payload);
      view = balanceAlertEventView(balanceAlertCrossingOfEvent(e));
      companyId = e.companyId;
      if (!companyId) throw new Error('without companyId');
    } catch (err) {
      this.log.warn({ eventId: evt.id, subject: evt.subject, err: (err as Error).message }, 'balance alert not mailed: undecodable payload');
      return 0;
    }
    const name = await companies.nameOf(tx, companyId);
    if (name === undefined) return 0; // not a company of this gateway
    const admins = await activeCompanyAdmins(tx, companyId);
    const m = balanceAlertMail(name, view);
    for (const admin of admins) await this.mail.enqueue(tx, { to: admin.email, ...m, kind: BALANCE_ALERT_MAIL_KIND, companyId });
    this.log.info({ eventId: evt.id, companyId, alertId: view.id, kind: view.kind, rail: view.rail, recipients: admins.length }, 'balance alert mailed');
    return admins.length;
  }

  async start(): Promise<void> {
    await this.bus.ensureStream('WALLETS');
    let wrote = 0;
    this.consumer = new InboxConsumer(this.db, this.bus, {
      stream: 'WALLETS',
      durable: BALANCE_ALERT_MAIL_CONSUMER,
      // NATS wildcards are whole tokens: the consumer reads wallet.> and skips what is no alert (wallet.moved).
      subject: 'wallet.>',
      log: this.log,
      handler: async (evt, tx) => {
        wrote += await this.handle(evt, tx);
      },
      afterCommit: () => {
        if (wrote === 0) return;
        wrote = 0;
        this.mail.nudge();
      },
    });
    await this.consumer.start();
  }

  async stop(): Promise<void> {
    await this.consumer?.stop();
  }
}
