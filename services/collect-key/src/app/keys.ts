import { AppError } from '@wallet/platform';
import {
  KEY_STATES,
  isPublicState,
  newKeyId,
  parseKeyRef,
  validateCreateKey,
  type CollectKeyRecord,
  type CreateKeyInput,
  type KeyState,
  type PublicKeyState,
} from '../domain/collect-key.js';
import type { CollectKeyDeps } from './deps.js';
import { keyEventFor } from './events.js';
import type { KeyCursor } from './ports.js';
import { registerKey, requireBrebWallet } from './register-key.js';
import { SettleRegistration } from './settle-registration.js';

const requireCompany = (companyId: string | undefined): string => {
  if (!companyId) throw new AppError('AUTH_REQUIRED');
  return companyId;
};

/**
 * A key of this company by `bkey_…` or `ext:<externalId>` (live, else most recently deleted); KEY_NOT_FOUND otherwise.
 * REGISTERING and FAILED rows are not keys to clients, nor is a cobro's key (it is the cobro's): never found here.
 */
export async function findKey(deps: CollectKeyDeps, companyId: string, ref: string): Promise<CollectKeyRecord> {
  const r = parseKeyRef(ref ?? '');
  const k = r === null ? undefined : r.kind === 'id' ? await deps.store.byId(r.id) : await deps.store.byExternalId(companyId, r.externalId);
  if (!k || k.companyId !== companyId || !isPublicState(k.state) || k.cobro) throw new AppError('KEY_NOT_FOUND');
  return k;
}

/**
 * CONTRACT §6. Validate → the company has a BREB wallet (FAST_WALLET_MISSING otherwise) → registerKey
 * (register-key.ts) with the customer's externalId as the claim: the customer's key in a claiming
 * state: ACTIVE/SUSPENDED → created=false; REGISTERING (a creation in flight or interrupted) → settle
 * it too → value (given or generated) not held here → store the row as REGISTERING → register at the
 * directory → SettleRegistration: ACTIVE (+ collectkey.created) → 201; TAKEN → FAILED →
 * KEY_ALREADY_REGISTERED (a generated alias is redrawn); REFUSED → FAILED → BREB_DIRECTORY_LOOKUP_FAILED;
 * UNAVAILABLE → the row stays REGISTERING → BREB_DIRECTORY_LOOKUP_FAILED, and the sweeper (or a retry)
 * finishes it. The directory never holds a value of ours that has no row here, so an inbound payment
 * always finds one. `created` (201) is true for the one call whose compare-and-set made the key
 * ACTIVE: a retry after a 503 that finishes the creation gets 201; a call that finds it ACTIVE (or
 * finished by the sweeper) 200.
 */
export class CreateKey {
  private readonly settle: SettleRegistration;
  constructor(private readonly deps: CollectKeyDeps) {
    this.settle = new SettleRegistration(deps);
  }

  async execute(companyIdIn: string | undefined, input: CreateKeyInput): Promise<{ key: CollectKeyRecord; created: boolean }> {
    const companyId = requireCompany(companyIdIn);
    const v = validateCreateKey(input);
    const deps = this.deps;
    // Asked of the ledger (the wallets' owner) before anything is stored.
    await requireBrebWallet(deps, companyId);
    return registerKey(deps, this.settle, {
      keyValue: v.keyValue,
      find: () => deps.store.liveByExternalId(companyId, v.externalId),
      build: (keyValue) => ({
        id: newKeyId(),
        companyId,
        externalId: v.externalId,
        name: v.name,
        keyType: v.keyType,
        keyValue,
        ivaApplicable: input.ivaApplicable === true,
        state: 'REGISTERING',
        createdAt: deps.now(),
        deletedAt: null,
      }),
    });
  }
}

export interface ListKeysInput {
  state?: string;
  externalId?: string;
  limit?: number;
  cursor?: string;
}

const encodeCursor = (c: KeyCursor) => Buffer.from(JSON.stringify([c.createdAt, c.id])).toString('base64url');
function decodeCursor(s: string): KeyCursor | null {
  try {
    const v = JSON.parse(Buffer.from(s, 'base64url').toString('utf8')) as unknown;
    if (
      Array.isArray(v) &&
      v.length === 2 &&
      typeof v[0] === 'string' &&
      typeof v[1] === 'string' &&
      !Number.isNaN(Date.parse(v[0])) &&
      /^bkey_[a-z0-9]{24}$/.test(v[1])
    )
      return { createdAt: v[0], id: v[1] };
  } catch {
    /* fallthrough */
  }
  return null;
}

/** §4.10: newest first, limit default 100 max 200, opaque cursor, state / externalId filters; bad input → INVALID_REQUEST. */
export class ListKeys {
  constructor(private readonly deps: CollectKeyDeps) {}

  async execute(companyIdIn: string | undefined, i: ListKeysInput): Promise<{ items: CollectKeyRecord[]; nextCursor: string | null }> {
    const companyId = requireCompany(companyIdIn);
    const fields: Array<{ path: string; message: string }> = [];
    const limit = i.limit === undefined || i.limit === 0 ? 100 : i.limit;
    if (!Number.isInteger(limit) || limit < 1 || limit > 200) fields.push({ path: 'limit', message: 'Debe ser un número entero entre 1 y 200.' });
    if (i.state !== undefined && i.state !== '' && !(KEY_STATES as readonly string[]).includes(i.state)) {
      fields.push({ path: 'state', message: 'Debe ser ACTIVE, SUSPENDED o DELETED.' });
    }
    if (i.externalId !== undefined && i.externalId !== '' && !/^[A-Za-z0-9._:-]{1,64}$/.test(i.externalId)) {
      fields.push({ path: 'externalId', message: 'Debe tener de 1 a 64 caracteres [A-Za-z0-9._:-].' });
    }
    const after = i.cursor ? decodeCursor(i.cursor) : undefined;
    if (after === null) fields.push({ path: 'cursor', message: 'No es un cursor de este listado.' });
    if (fields.length > 0) throw new AppError('INVALID_REQUEST', undefined, { fields });
    const r = await this.deps.store.list(
      companyId,
      {
        ...(i.state ? { state: i.state as PublicKeyState } : {}),
        ...(i.externalId ? { externalId: i.externalId } : {}),
      },
      limit,
      after ?? undefined,
    );
    const last = r.items[r.items.length - 1];
    return { items: r.items.map(({ cursor: _c, ...k }) => k), nextCursor: r.hasMore && last ? encodeCursor(last.cursor) : null };
  }
}

export class GetKey {
  constructor(private readonly deps: CollectKeyDeps) {}
  execute(companyId: string | undefined, ref: string): Promise<CollectKeyRecord> {
    return findKey(this.deps, requireCompany(companyId), ref);
  }
}

/**
 * §3.4: ACTIVE|SUSPENDED → DELETED (unregistered at the directory first); a repeat returns the deleted key.
 * `ext:` of a customer whose key is still REGISTERING → BREB_DIRECTORY_LOOKUP_FAILED (503, retry).
 */
export class DeleteKey {
  constructor(private readonly deps: CollectKeyDeps) {}

  async execute(companyIdIn: string | undefined, ref: string): Promise<CollectKeyRecord> {
    const deps = this.deps;
    const companyId = requireCompany(companyIdIn);
    const r = parseKeyRef(ref ?? '');
    if (r?.kind === 'ext' && (await deps.store.liveByExternalId(companyId, r.externalId))?.state === 'REGISTERING') {
      // Answering with the customer's previous, deleted key would say "deleted" while a new one is about to go live.
      // 503 (retry): the directory's answer for it is what is pending.
      throw new AppError('BREB_DIRECTORY_LOOKUP_FAILED', 'La llave de cobro de este cliente aún se está registrando en el directorio Bre-B; intente de nuevo.');
    }
    return deleteKeyRecord(deps, await findKey(deps, companyId, ref));
  }
}

/**
 * ACTIVE|SUSPENDED → DELETED, unregistered at the directory first (unreachable → BREB_DIRECTORY_LOOKUP_FAILED,
 * the key unchanged); the live QR revoked, `collectkey.deleted` (not for a cobro's key); a DELETED key as it is.
 * DeleteKey and CloseCobroKey.
 */
export async function deleteKeyRecord(deps: CollectKeyDeps, k: CollectKeyRecord): Promise<CollectKeyRecord> {
  if (k.state === 'DELETED') return k;
  // Another live key may hold the value only if this one is deleted, so the registration is ours.
  await deps.directory.unregister(k.keyValue);
  const done = await deps.store.setState(k.id, ['ACTIVE', 'SUSPENDED'], 'DELETED', keyEventFor(deps, 'deleted'));
  if (done) deps.log.info({ keyId: k.id, companyId: k.companyId, cobroId: k.cobro?.cobroId }, 'collect key deleted');
  return done ?? (await deps.store.byId(k.id)) ?? k;
}

/** Admin: ACTIVE ⇄ SUSPENDED (never from DELETED). Without a company in the metadata any company's key by id. */
export class SetKeyState {
  constructor(private readonly deps: CollectKeyDeps) {}

  async execute(companyId: string | undefined, ref: string, state: string): Promise<CollectKeyRecord> {
    const deps = this.deps;
    if (state !== 'ACTIVE' && state !== 'SUSPENDED') {
      throw new AppError('INVALID_REQUEST', undefined, { fields: [{ path: 'state', message: 'Debe ser ACTIVE o SUSPENDED.' }] });
    }
    let k: CollectKeyRecord | undefined;
    if (companyId) k = await findKey(deps, companyId, ref);
    else {
      const r = parseKeyRef(ref ?? '');
      k = r?.kind === 'id' ? await deps.store.byId(r.id) : undefined;
      if (!k || !isPublicState(k.state)) throw new AppError('KEY_NOT_FOUND');
    }
    if (k.state === 'DELETED') throw new AppError('KEY_NOT_ACTIVE', 'Una llave eliminada no cambia de estado.');
    if (k.state === state) return k;
    const from: KeyState = state === 'ACTIVE' ? 'SUSPENDED' : 'ACTIVE';
    const done = await deps.store.setState(k.id, [from], state, keyEventFor(deps, 'state_changed'));
    if (done) {
      deps.log.info({ keyId: k.id, state }, 'collect key state changed');
      return done;
    }
    const now = await deps.store.byId(k.id);
    if (!now || now.state === 'DELETED') throw new AppError('KEY_NOT_ACTIVE', 'Una llave eliminada no cambia de estado.');
    return now;
  }
}
