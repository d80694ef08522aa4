import { AppError } from '@wallet/platform';
import {
  KEY_STATES, generateAlias, newKeyId, parseKeyRef, validateCreateKey,
  type CollectKeyRecord, type CreateKeyInput, type KeyState,
} from '../domain/collect-key.js';
import type { CollectKeyDeps } from './deps.js';
import { collectKeyEvent } from './events.js';
import type { KeyCursor } from './ports.js';

const requireCompany = (companyId: string | undefined): string => {
  if (!companyId) throw new AppError('AUTH_REQUIRED');
  return companyId;
};

/** A key of this company by `bkey_…` or `ext:<externalId>` (live, else most recently deleted); KEY_NOT_FOUND otherwise. */
export async function findKey(deps: CollectKeyDeps, companyId: string, ref: string): Promise<CollectKeyRecord> {
  const r = parseKeyRef(ref ?? '');
  const k = r === null ? undefined : r.kind === 'id' ? await deps.store.byId(r.id) : await deps.store.byExternalId(companyId, r.externalId);
  if (!k || k.companyId !== companyId) throw new AppError('KEY_NOT_FOUND');
  return k;
}

/**
 * CONTRACT §6. Validate → the live key of that externalId (created=false) → register the value at the
 * directory (409 → KEY_ALREADY_REGISTERED, down → BREB_DIRECTORY_LOOKUP_FAILED, nothing stored) →
 * insert + collectkey.created. The partial unique indexes settle races: a lost externalId race
 * returns the winner; a lost value race is KEY_ALREADY_REGISTERED. A registration we made for a row
 * that was not stored is withdrawn (unless the value is live here under another key).
 */
export class CreateKey {
  constructor(private readonly deps: CollectKeyDeps) {}

  async execute(companyIdIn: string | undefined, input: CreateKeyInput): Promise<{ key: CollectKeyRecord; created: boolean }> {
    const companyId = requireCompany(companyIdIn);
    const v = validateCreateKey(input);
    const deps = this.deps;
    const existing = await deps.store.liveByExternalId(companyId, v.externalId);
    if (existing) return { key: existing, created: false };

    for (let attempt = 0; ; attempt++) {
      const keyValue = v.keyValue ?? generateAlias();
      const holder = await deps.store.byValue(keyValue);
      if (holder && holder.state !== 'DELETED') {
        if (v.keyValue === null && attempt < 5) continue; // a generated alias collided: draw another
        throw new AppError('KEY_ALREADY_REGISTERED');
      }
      try {
        await deps.directory.register({ keyValue, holderName: v.name, callbackUrl: deps.settings.incomingCallbackUrl });
      } catch (err) {
        if (err instanceof AppError && err.code === 'KEY_ALREADY_REGISTERED' && v.keyValue === null && attempt < 5) continue;
        throw err;
      }
      const rec: CollectKeyRecord = {
        id: newKeyId(), companyId, externalId: v.externalId, name: v.name, keyType: v.keyType, keyValue, ivaApplicable: input.ivaApplicable === true,
        state: 'ACTIVE', createdAt: deps.now(), deletedAt: null,
      };
      const out = await deps.store.insertKey(rec, (k) => collectKeyEvent(deps, 'created', k));
      if (typeof out !== 'string') {
        deps.log.info({ keyId: out.id, companyId, externalId: out.externalId }, 'collect key created');
        return { key: out, created: true };
      }
      // Lost a race. Withdraw our registration unless the value is live here (the winner holds it).
      const live = await deps.store.byValue(keyValue);
      if (!live || live.state === 'DELETED') {
        await deps.directory.unregister(keyValue).catch((err: unknown) =>
          deps.log.warn({ keyValue, err: (err as Error).message }, 'could not withdraw an unused registration'));
      }
      if (out === 'EXTERNAL_TAKEN') {
        const winner = await deps.store.liveByExternalId(companyId, v.externalId);
        if (winner) return { key: winner, created: false };
        continue; // the winner was deleted meanwhile: try again
      }
      if (v.keyValue === null && attempt < 5) continue;
      throw new AppError('KEY_ALREADY_REGISTERED');
    }
  }
}

export interface ListKeysInput { state?: string; externalId?: string; limit?: number; cursor?: string }

const encodeCursor = (c: KeyCursor) => Buffer.from(JSON.stringify([c.createdAt, c.id])).toString('base64url');
function decodeCursor(s: string): KeyCursor | null {
  try {
    const v = JSON.parse(Buffer.from(s, 'base64url').toString('utf8')) as unknown;
    if (Array.isArray(v) && v.length === 2 && typeof v[0] === 'string' && typeof v[1] === 'string'
      && !Number.isNaN(Date.parse(v[0])) && /^bkey_[a-z0-9]{24}$/.test(v[1])) return { createdAt: v[0], id: v[1] };
  } catch { /* fallthrough */ }
  return null;
}

/** §4.10: newest first, limit default 100 max 200, opaque cursor, state / externalId filters; bad input → INVALID_REQUEST. */
export class ListKeys {
  constructor(private readonly deps: CollectKeyDeps) {}

  async execute(companyIdIn: string | undefined, i: ListKeysInput): Promise<{ items: CollectKeyRecord[]; nextCursor: string | null }> {
    const companyId = requireCompany(companyIdIn);
    const fields: Array<{ path: string; message: string }> = [];
    const limit = i.limit === undefined || i.limit === 0 ? 100 : i.limit;
    if (!Number.isInteger(limit) || limit < 1 || limit > 200) fields.push({ path: 'limit', message: 'must be an integer from 1 to 200' });
    if (i.state !== undefined && i.state !== '' && !(KEY_STATES as readonly string[]).includes(i.state)) {
      fields.push({ path: 'state', message: 'must be ACTIVE, SUSPENDED or DELETED' });
    }
    if (i.externalId !== undefined && i.externalId !== '' && !/^[A-Za-z0-9._:-]{1,64}$/.test(i.externalId)) {
      fields.push({ path: 'externalId', message: 'must be 1-64 characters of A-Z a-z 0-9 . _ : -' });
    }
    const after = i.cursor ? decodeCursor(i.cursor) : undefined;
    if (after === null) fields.push({ path: 'cursor', message: 'is not a cursor of this listing' });
    if (fields.length > 0) throw new AppError('INVALID_REQUEST', undefined, { fields });
    const r = await this.deps.store.list(companyId, {
      ...(i.state ? { state: i.state as KeyState } : {}), ...(i.externalId ? { externalId: i.externalId } : {}),
    }, limit, after ?? undefined);
    const last = r.items[r.items.length - 1];
    return { items: r.items.map(({ cursor: _c, ...k }) => k), nextCursor: r.hasMore && last ? encodeCursor(last.cursor) : null };
  }
}

export class GetKey {
  constructor(private readonly deps: CollectKeyDeps) {}
  execute(companyId: string | undefined, ref: string): Promise<CollectKeyRecord> { return findKey(this.deps, requireCompany(companyId), ref); }
}

/** §3.4: ACTIVE|SUSPENDED → DELETED (unregistered at the directory first); a repeat returns the deleted key. */
export class DeleteKey {
  constructor(private readonly deps: CollectKeyDeps) {}

  async execute(companyIdIn: string | undefined, ref: string): Promise<CollectKeyRecord> {
    const deps = this.deps;
    const k = await findKey(deps, requireCompany(companyIdIn), ref);
    if (k.state === 'DELETED') return k;
    // Another live key may hold the value only if this one is deleted, so the registration is ours.
    await deps.directory.unregister(k.keyValue);
    const done = await deps.store.setState(k.id, ['ACTIVE', 'SUSPENDED'], 'DELETED', (r) => collectKeyEvent(deps, 'deleted', r));
    if (done) deps.log.info({ keyId: k.id, companyId: k.companyId }, 'collect key deleted');
    return done ?? (await deps.store.byId(k.id)) ?? k;
  }
}

/** Admin: ACTIVE ⇄ SUSPENDED (never from DELETED). Without a company in the metadata any company's key by id. */
export class SetKeyState {
  constructor(private readonly deps: CollectKeyDeps) {}

  async execute(companyId: string | undefined, ref: string, state: string): Promise<CollectKeyRecord> {
    const deps = this.deps;
    if (state !== 'ACTIVE' && state !== 'SUSPENDED') {
      throw new AppError('INVALID_REQUEST', undefined, { fields: [{ path: 'state', message: 'must be ACTIVE or SUSPENDED' }] });
    }
    let k: CollectKeyRecord | undefined;
    if (companyId) k = await findKey(deps, companyId, ref);
    else {
      const r = parseKeyRef(ref ?? '');
      k = r?.kind === 'id' ? await deps.store.byId(r.id) : undefined;
      if (!k) throw new AppError('KEY_NOT_FOUND');
    }
    if (k.state === 'DELETED') throw new AppError('KEY_NOT_ACTIVE', 'Una llave eliminada no cambia de estado.');
    if (k.state === state) return k;
    const from: KeyState = state === 'ACTIVE' ? 'SUSPENDED' : 'ACTIVE';
    const done = await deps.store.setState(k.id, [from], state, (r) => collectKeyEvent(deps, 'state_changed', r));
    if (done) { deps.log.info({ keyId: k.id, state }, 'collect key state changed'); return done; }
    const now = await deps.store.byId(k.id);
    if (!now || now.state === 'DELETED') throw new AppError('KEY_NOT_ACTIVE', 'Una llave eliminada no cambia de estado.');
    return now;
  }
}
