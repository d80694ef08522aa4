import { randomUUID } from 'node:crypto';
import type { Logger, ReturnStore } from '@wallet/platform';
import type { BrebDirectory, CollectKeyStore, LedgerPort } from './ports.js';

export interface CollectKeySettings {
  incomingCallbackUrl: string;
  callbackSecret: string;
  merchantName: string;
  merchantCity: string;
  sweeperGraceSeconds: number;
}

export interface CollectKeyDeps {
  store: CollectKeyStore;
  /** Returns of credited payments (docs/returns.md). */
  returns: ReturnStore;
  ledger: LedgerPort;
  directory: BrebDirectory;
  settings: CollectKeySettings;
  log: Logger;
  now: () => Date;
  newId: () => string;
}

export function collectKeyDeps(d: Omit<CollectKeyDeps, 'now' | 'newId'> & Partial<Pick<CollectKeyDeps, 'now' | 'newId'>>): CollectKeyDeps {
  return { now: () => new Date(), newId: () => randomUUID(), ...d };
}
