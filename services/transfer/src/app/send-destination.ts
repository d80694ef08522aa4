import { AppError } from '@wallet/platform';
import { bankRoutable, placeholderAccount } from '../domain/ach-rules.js';
import { checkKey, type KeyType } from '../domain/keys.js';
import { normalizeDocument, sameHolderName } from '../domain/names.js';
import type { Destination } from '../domain/transfer.js';
import type { TransferDeps } from './deps.js';
import type { DirectoryResult } from './ports.js';
import { notFoundAsError } from './resolve-key.js';
import type { SendCommand } from './send-input.js';
import { SEND_MESSAGES } from './send-messages.js';

type AchDestination = Extract<Destination, { kind: 'ACH' }>;

type AchValidation = Awaited<ReturnType<TransferDeps['rails']['validateAchAccount']>>;

/**
 * The destination account an ACH send is screened on against the AML list (docs/security.md "Screening on the destination account"), as
 * its fingerprint: known from the request, so it is read with the documents, before the rail is asked.
 * A Bre-B send has none here: the directory gives no account, and its document is bound to the
 * directory's holder (NAME_MISMATCH otherwise), so it cannot be varied.
 */
export function amlAccountOf(deps: Pick<TransferDeps, 'destinationFingerprint'>, cmd: SendCommand): string | null {
  const d = cmd.destination;
  return d.kind === 'ACH' ? deps.destinationFingerprint({ kind: 'ACH', bankAchCode: d.bankAchCode, accountNumber: d.accountNumber }) : null;
}

/**
 * The provider reads a send's destination needs: the directory, a remembered resolve-key anchor, an
 * ACH account validation. A single send calls them straight; a batch memoises them (one call per
 * distinct key, anchor or account).
 */
export interface DestinationLookups {
  directory(keyValue: string, keyType: KeyType): Promise<DirectoryResult>;
  anchor(anchorHandle: string): Promise<{ keyType: KeyType; keyValue: string } | undefined>;
  achAccount(d: AchDestination): Promise<AchValidation>;
}

export function directLookups(deps: TransferDeps, companyId: string): DestinationLookups {
  return {
    directory: (keyValue, keyType) => deps.directory.lookup(keyValue, keyType),
    anchor: (anchorHandle) => deps.store.findResolvedKey(companyId, anchorHandle, deps.settings.resolvedKeyTtlSeconds),
    achAccount: (d) => deps.rails.validateAchAccount(d),
  };
}

/** The same reads, each made once per distinct argument (concurrent callers share the call). */
export function memoisedLookups(inner: DestinationLookups): DestinationLookups {
  const memo = <A extends unknown[], R>(key: (...a: A) => string, f: (...a: A) => Promise<R>) => {
    const seen = new Map<string, Promise<R>>();
    return (...a: A): Promise<R> => {
      const k = key(...a);
      let p = seen.get(k);
      if (!p) {
        p = f(...a);
        seen.set(k, p);
      }
      return p;
    };
  };
  return {
    directory: memo((v, t) => `${t}:${v}`, inner.directory),
    anchor: memo((h) => h, inner.anchor),
    achAccount: memo(
      (d) => JSON.stringify([d.bankId, d.accountTypeId, d.accountNumber, d.documentTypeId, d.documentNumber, d.holderFirstName, d.holderLastName]),
      inner.achAccount,
    ),
  };
}

/**
 * The send's destination checks, in the contract's order: a Bre-B key (or a remembered anchor) always
 * re-checked at the directory (a key can be deactivated or change holder at any time) with
 * NAME_MISMATCH; a bank account validated at the ACH rail.
 */
export async function checkDestination(
  cmd: SendCommand,
  lookups: DestinationLookups,
  notFound: DirectoryRefusal = notFoundAsError,
): Promise<{ destination: Destination; targetName: string }> {
  const d = cmd.destination;
  if (d.kind === 'ACH') {
    const destination = achDestinationOf(cmd);
    checkAchValidation(destination, await lookups.achAccount(destination));
    return { destination, targetName: achTargetName(cmd, destination) };
  }
  let key: { keyValue: string; keyType: KeyType };
  let anchor: string | null = null;
  if (d.kind === 'BREB_ANCHOR') {
    anchor = d.anchorHandle;
    const remembered = await lookups.anchor(anchor);
    if (!remembered) throw new AppError('INVALID_KEY', SEND_MESSAGES.anchorUnknown);
    key = remembered;
  } else if (d.kind === 'BREB_KEY') {
    const k = checkKey(d.keyValue, d.keyType);
    if (!k.ok) throw new AppError('INVALID_KEY', k.problem === 'INVALID_KEY' ? k.reason : undefined);
    key = k;
  } else {
    throw new AppError('INTERNAL_ERROR');
  }
  const entry = await lookups.directory(key.keyValue, key.keyType);
  return { targetName: cmd.targetName!, destination: brebDestinationOf(entry, anchor, cmd.targetName!, cmd.targetDocument!, notFound) };
}

/** How a directory verdict is refused: a single send's way (`notFoundAsError`) or a batch line's. */
export type DirectoryRefusal = (code: 'KEY_NOT_FOUND' | 'KEY_INACTIVE' | 'INVALID_KEY') => AppError;

/** A BREB destination from the directory's answer, or the send's refusal (in the contract's order). */
export function brebDestinationOf(
  entry: DirectoryResult,
  anchor: string | null,
  targetName: string,
  targetDocument: string,
  notFound: DirectoryRefusal = notFoundAsError,
): Destination {
  if (entry.status === 'not_found') throw notFound('KEY_NOT_FOUND');
  if (entry.status === 'invalid') throw notFound('INVALID_KEY');
  if (entry.status === 'inactive') throw notFound('KEY_INACTIVE');
  if (anchor && entry.anchorHandle !== anchor) throw new AppError('INVALID_KEY', SEND_MESSAGES.anchorChanged);
  if (!sameHolderName(targetName, entry.recipient.fullName)) throw new AppError('NAME_MISMATCH');
  if (normalizeDocument(targetDocument) !== normalizeDocument(entry.recipient.idValue)) {
    throw new AppError('NAME_MISMATCH', SEND_MESSAGES.documentMismatch, { field: 'targetDocument' });
  }
  return {
    kind: 'BREB',
    keyType: entry.keyType,
    keyValue: entry.keyValue,
    anchorHandle: entry.anchorHandle,
    bankName: entry.recipient.bankName || null,
    bankAccountType: entry.recipient.bankAccountType || null,
  };
}

/** An ACH send's destination (the bank must be routable; checked before the account is validated). */
export function achDestinationOf(cmd: SendCommand): Extract<Destination, { kind: 'ACH' }> {
  const d = cmd.destination;
  if (d.kind !== 'ACH') throw new AppError('INTERNAL_ERROR');
  if (!bankRoutable(d.bankName, d.bankAchCode)) throw new AppError('DESTINATION_REJECTED', SEND_MESSAGES.bankNotRoutable);
  return {
    kind: 'ACH',
    bankId: d.bankId,
    bankName: d.bankName,
    bankAchCode: d.bankAchCode,
    accountTypeId: d.accountTypeId,
    accountNumber: d.accountNumber,
    documentTypeId: d.documentTypeId,
    documentNumber: d.documentNumber,
    holderFirstName: d.holderFirstName,
    holderLastName: d.holderLastName,
  };
}

/** The rail's account validation as the send's answer. */
export function checkAchValidation(
  d: Extract<Destination, { kind: 'ACH' }>,
  v: { result: 'valid' } | { result: 'invalid'; message: string } | { result: 'unavailable' },
): void {
  if (v.result === 'unavailable') throw new AppError('ACH_RAIL_UNAVAILABLE');
  if (v.result === 'invalid') throw new AppError('INVALID_BANK_ACCOUNT', v.message);
  if (placeholderAccount(d.accountNumber)) throw new AppError('DESTINATION_REJECTED', SEND_MESSAGES.placeholderAccount);
}

export function achTargetName(cmd: SendCommand, d: Extract<Destination, { kind: 'ACH' }>): string {
  return cmd.targetName ?? `${d.holderFirstName} ${d.holderLastName}`;
}
