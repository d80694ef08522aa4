import { randomUUID } from 'node:crypto';
import { SqlReturnStore, createLogger, signPayload, type Logger } from '@wallet/platform';
import { depositDeps, type DepositDeps, type DepositSettings } from '../../src/app/deps.js';
import { PSE_RETURNS } from '../../src/app/returns.js';
import type { DepositStore, LedgerPort, Mailer, PseProvider } from '../../src/app/ports.js';
import { Sweeper } from '../../src/app/sweeper.js';
import { depositUseCases, type DepositUseCases } from '../../src/app/use-cases.js';
import type { DepositRecord } from '../../src/domain/deposit.js';
import { SqlDepositStore } from '../../src/persistence/deposit.store.js';
import { payer, type Harness } from './harness.js';

/**
 * The deposit service's use cases wired by hand on the harness's database and real ledger (over
 * gRPC), so a test drives the callbacks, the sweepers (several replicas) and the operator's
 * resolutions step by step, with its own settings (PSE_PAID_GRACE_SECONDS 60, sweeper grace 0: a
 * money step in flight is anyone's to finish at once). The harness's own sweeper is kept out of the
 * way (SWEEPER_INTERVAL_MS one hour).
 */
export const RIG_SECRET = 'rig-pse-callback-secret';
export const GRACE_SECONDS = 60;

export const pseLinks: PseProvider = {
  async createLink(r) {
    return { linkId: `lnk_${r.depositId}`, paygatewayUrl: `http://127.0.0.1:1/pse/pay/${r.depositId}` };
  },
  async refund() {
    return { outcome: 'UNAVAILABLE', returnedAt: null };
  },
};
const mailer: Mailer = {
  async send() {
    return { messageId: 'none' };
  },
};

export interface Rig {
  deps: DepositDeps;
  uc: DepositUseCases;
  sweepers: Sweeper[];
  log: Logger;
}

export function buildRig(
  h: Harness,
  o: { store?: DepositStore; ledger: LedgerPort; settings?: Partial<DepositSettings>; replicas?: number; log?: Logger },
): Rig {
  const log = o.log ?? createLogger('pse-rig', process.env.TEST_LOG_LEVEL ?? 'silent');
  const deps = depositDeps({
    store: o.store ?? new SqlDepositStore(h.deposit.db),
    returns: new SqlReturnStore(h.deposit.db, PSE_RETURNS),
    ledger: o.ledger,
    pse: pseLinks,
    mailer,
    settings: {
      inflowEnabled: true,
      linkTtlSeconds: 3600,
      paidGraceSeconds: GRACE_SECONDS,
      callbackUrl: 'http://127.0.0.1:1/webhooks/pse',
      callbackSecret: RIG_SECRET,
      sweeperGraceSeconds: 0,
      ...o.settings,
    },
    log,
  });
  const uc = depositUseCases(deps);
  const sweepers = Array.from({ length: o.replicas ?? 1 }, () => new Sweeper(deps, uc.saga, { intervalMs: 3_600_000, batch: 20 }));
  return { deps, uc, sweepers, log };
}

/** A PSE deposit of 100,000 (fee 1,000 + IVA 190 → net 98,810) whose link expires `expiresInMs` from now (negative: already past). */
export async function newDeposit(h: Harness, rig: Rig, companyId: string, expiresInMs: number): Promise<DepositRecord> {
  const d = await rig.uc.createPse.execute(companyId, undefined, { ...payer(), amountCents: 100_000n, company: { name: 'Acme S.A.S.', ivaApplicable: true } });
  const expiresAt = new Date(Date.now() + expiresInMs);
  await h.deposit.db.query(`update pse_deposit.deposits set expires_at = ?::timestamptz where id = ?`, [expiresAt.toISOString(), d.id]);
  return { ...d, expiresAt };
}

export interface CallbackBody {
  eventId?: string;
  status: 'PAID' | 'FAILED' | 'REVERSED';
  paidAt?: Date;
  providerTransferId?: string;
  payerBank?: string;
  errorMessage?: string;
}

/** The provider's signed callback body for a deposit, as the sandbox sends it. */
export function signedCallback(depositId: string, b: CallbackBody, secret = RIG_SECRET): { rawBody: Buffer; signature: string } {
  const occurredAt = new Date().toISOString();
  const raw = Buffer.from(
    JSON.stringify({
      eventId: b.eventId ?? `evt-${randomUUID()}`,
      depositId,
      providerTransferId: b.providerTransferId ?? `pse-${depositId}`,
      status: b.status,
      ...(b.payerBank ? { payerBank: b.payerBank } : { payerBank: 'Bancolombia' }),
      ...(b.paidAt ? { paidAt: b.paidAt.toISOString() } : {}),
      ...(b.errorMessage ? { errorMessage: b.errorMessage } : {}),
      occurredAt,
    }),
  );
  return { rawBody: raw, signature: signPayload(secret, raw, Math.floor(Date.now() / 1000)) };
}
