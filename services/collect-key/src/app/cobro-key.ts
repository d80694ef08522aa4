import { AppError } from '@wallet/platform';
import { cobroExternalId, COBRO_ID, sameCobroTerms, validateIssueCobroKey, type IssueCobroKeyInput } from '../domain/cobro-key.js';
import { newKeyId, type CollectKeyRecord } from '../domain/collect-key.js';
import { encodeDynamicQr } from '../domain/emvco.js';
import type { CollectKeyDeps } from './deps.js';
import { deleteKeyRecord } from './keys.js';
import { registerKey, requireBrebWallet } from './register-key.js';
import { SettleRegistration } from './settle-registration.js';

const requireCompany = (companyId: string | undefined): string => {
  if (!companyId) throw new AppError('AUTH_REQUIRED');
  return companyId;
};

/** A cobro's key and the dynamic QR issued with it. */
export interface IssuedCobroKey {
  key: CollectKeyRecord;
  qrPayload: string;
  created: boolean;
}

/**
 * A cobro's dynamic key and QR (the cobro is pse-deposit's; the company from the call metadata).
 * An ordinary collect key of the company, through CreateKey's registration path (register-key.ts:
 * REGISTERING → directory → ACTIVE; a generated alias), marked with the cobro and its terms and
 * hidden from the customer keys (listing, lookups, `collectkey.*` events). The dynamic QR
 * (encodeDynamicQr: 01=12, the key, the amount when fixed, the transaction id in 62/05, the expiry in
 * template 80) is built for the value and stored with the row, so a replay returns the same payload.
 * Idempotent on the cobro: a second call with the same terms → the same key and QR, `created` false
 * (racing calls: the cobro's unique index makes one key); other terms (transaction id, amount,
 * expiry) → REFERENCE_CONFLICT. A new key needs a BREB wallet and an expiry still ahead.
 */
export class IssueCobroKey {
  private readonly settle: SettleRegistration;
  constructor(private readonly deps: CollectKeyDeps) {
    this.settle = new SettleRegistration(deps);
  }

  async execute(companyIdIn: string | undefined, input: IssueCobroKeyInput): Promise<IssuedCobroKey> {
    const companyId = requireCompany(companyIdIn);
    const v = validateIssueCobroKey(input);
    const deps = this.deps;
    const known = await deps.store.byCobroId(companyId, v.cobroId);
    if (!known) {
      if (v.expiresAt.getTime() <= deps.now().getTime()) {
        throw new AppError('INVALID_REQUEST', undefined, { fields: [{ path: 'expiresAt', message: 'must be in the future' }] });
      }
      await requireBrebWallet(deps, companyId);
    }
    const name = v.merchantName || deps.settings.merchantName;
    const r = await registerKey(deps, this.settle, {
      keyValue: null,
      find: () => deps.store.byCobroId(companyId, v.cobroId),
      build: (keyValue) => ({
        id: newKeyId(),
        companyId,
        externalId: cobroExternalId(v.cobroId),
        name: name.slice(0, 100),
        keyType: 'ALPHANUM',
        keyValue,
        ivaApplicable: v.ivaApplicable,
        state: 'REGISTERING',
        createdAt: deps.now(),
        deletedAt: null,
        cobro: {
          cobroId: v.cobroId,
          transactionId: v.transactionId,
          amountCents: v.amountCents,
          expiresAt: v.expiresAt,
          qrPayload: encodeDynamicQr({
            keyValue,
            merchantName: name,
            merchantCity: deps.settings.merchantCity,
            transactionId: v.transactionId,
            amountCents: v.amountCents,
            expiresAt: v.expiresAt,
          }),
        },
      }),
    });
    const cobro = r.key.cobro;
    if (!cobro) throw new Error(`cobro key ${r.key.id} without its cobro`);
    if (!sameCobroTerms(cobro, v)) {
      throw new AppError('REFERENCE_CONFLICT', 'El cobro ya tiene una llave emitida con otro identificador de transacción, valor o vencimiento.');
    }
    if (r.created) deps.log.info({ keyId: r.key.id, companyId, cobroId: v.cobroId }, 'cobro key issued');
    return { key: r.key, qrPayload: cobro.qrPayload, created: r.created };
  }
}

/**
 * The cobro is closed (paid, expired, cancelled): its key is deleted as DeleteKey deletes one
 * (unregistered at the directory first, then DELETED; a later payment to it is held UNASSIGNED).
 * Idempotent (a DELETED key as it is). KEY_NOT_FOUND only when the cobro never had a key; still
 * REGISTERING → BREB_DIRECTORY_LOOKUP_FAILED (retry: the directory's answer is pending, and a
 * registration that lands after a delete here would route payments to a key we call deleted).
 */
export class CloseCobroKey {
  constructor(private readonly deps: CollectKeyDeps) {}

  async execute(companyIdIn: string | undefined, cobroId: string): Promise<CollectKeyRecord> {
    const companyId = requireCompany(companyIdIn);
    const k = COBRO_ID.test(cobroId ?? '') ? await this.deps.store.byCobroId(companyId, cobroId) : undefined;
    if (!k) throw new AppError('KEY_NOT_FOUND', 'El cobro no tiene llave Bre-B.');
    if (k.state === 'REGISTERING') {
      throw new AppError('BREB_DIRECTORY_LOOKUP_FAILED', 'La llave del cobro aún se está registrando en el directorio Bre-B; intente de nuevo.');
    }
    return deleteKeyRecord(this.deps, k);
  }
}
