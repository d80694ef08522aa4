import { AppError } from '@wallet/platform';
import { generateAlias, type CollectKeyRecord } from '../domain/collect-key.js';
import type { CollectKeyDeps } from './deps.js';
import type { SettleRegistration } from './settle-registration.js';

/** A bound on the rounds (alias redraws, lost races, a REGISTERING row that turned FAILED). */
const MAX_ROUNDS = 6;

/** What a creation claims: a customer's externalId (CreateKey) or a cobro (IssueCobroKey). */
export interface KeyClaim {
  /** The key already holding the claim, if any (a unique index keeps it to one): a customer's in a claiming state, a cobro's in any but FAILED. */
  find(): Promise<CollectKeyRecord | undefined>;
  /** The REGISTERING row to store for a value. */
  build(keyValue: string): CollectKeyRecord;
  /** The value asked for; null: a generated alias (redrawn when taken). */
  keyValue: string | null;
}

/**
 * The registration path CreateKey and IssueCobroKey share (README "CreateKey"): the claim's key, if
 * stored and settled → `created` false; REGISTERING → settle it too → value not held here → store the
 * row as REGISTERING (the partial unique indexes settle races: a lost claim race settles or returns
 * the winner's row, a lost value race is KEY_ALREADY_REGISTERED or a redraw) → register at the
 * directory → SettleRegistration: ACTIVE → `created` true; TAKEN → FAILED → KEY_ALREADY_REGISTERED (a
 * generated alias is redrawn); REFUSED → FAILED → BREB_DIRECTORY_LOOKUP_FAILED; UNAVAILABLE → the row
 * stays REGISTERING → BREB_DIRECTORY_LOOKUP_FAILED (the sweeper, or a retry, finishes it).
 */
export async function registerKey(deps: CollectKeyDeps, settle: SettleRegistration, claim: KeyClaim): Promise<{ key: CollectKeyRecord; created: boolean }> {
  const generated = claim.keyValue === null;
  for (let round = 1; ; round++) {
    const last = round >= MAX_ROUNDS;
    const existing = await claim.find();
    if (existing && existing.state !== 'REGISTERING') return { key: existing, created: false };
    if (existing) {
      // Another request for this claim stored it: finish it rather than wait for the sweeper.
      const s = await settle.execute(existing);
      if (s.key.state === 'REGISTERING') throw new AppError('BREB_DIRECTORY_LOOKUP_FAILED');
      if (s.key.state !== 'FAILED') return { key: s.key, created: s.activated };
      if (last) throw new AppError(s.outcome === 'TAKEN' ? 'KEY_ALREADY_REGISTERED' : 'BREB_DIRECTORY_LOOKUP_FAILED');
      continue; // that value was refused: this request starts afresh
    }

    const keyValue = claim.keyValue ?? generateAlias();
    const holder = await deps.store.byValue(keyValue);
    if (holder && holder.state !== 'DELETED') {
      if (generated && !last) continue; // a generated alias collided: draw another
      throw new AppError('KEY_ALREADY_REGISTERED');
    }
    const out = await deps.store.insertKey(claim.build(keyValue));
    if (out === 'EXTERNAL_TAKEN') {
      if (last) throw new AppError('BREB_DIRECTORY_LOOKUP_FAILED');
      continue; // a concurrent request for the same claim won: the next round returns or settles its row
    }
    if (out === 'VALUE_TAKEN') {
      if (generated && !last) continue;
      throw new AppError('KEY_ALREADY_REGISTERED');
    }

    const s = await settle.execute(out);
    if (s.key.state === 'REGISTERING') {
      deps.log.warn({ keyId: out.id, companyId: out.companyId, externalId: out.externalId }, 'collect key registration unconfirmed: left to the sweeper');
      throw new AppError('BREB_DIRECTORY_LOOKUP_FAILED');
    }
    if (s.key.state !== 'FAILED') return { key: s.key, created: s.activated };
    if (s.outcome === 'TAKEN') {
      if (generated && !last) continue;
      throw new AppError('KEY_ALREADY_REGISTERED');
    }
    throw new AppError('BREB_DIRECTORY_LOOKUP_FAILED');
  }
}

/** A key's payments are credited to the company's BREB wallet: without one, every payment to it would be refused by the ledger. */
export async function requireBrebWallet(deps: CollectKeyDeps, companyId: string): Promise<void> {
  if (!(await deps.ledger.hasBrebWallet(companyId))) {
    throw new AppError(
      'FAST_WALLET_MISSING',
      'La empresa no tiene billetera BREB; los pagos a una llave de cobro se acreditan en ella. Solicite su aprovisionamiento antes de crear llaves.',
    );
  }
}
