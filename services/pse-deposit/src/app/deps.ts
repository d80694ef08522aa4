import { randomUUID } from 'node:crypto';
import { newExceptionId, type Logger, type ReturnStore } from '@wallet/platform';
import type { DepositStore, LedgerPort, Mailer, PseProvider } from './ports.js';

export interface DepositSettings {
  inflowEnabled: boolean;
  linkTtlSeconds: number;
  paidGraceSeconds: number;
  callbackUrl: string;
  callbackSecret: string;
  sweeperGraceSeconds: number;
}

export interface DepositDeps {
  store: DepositStore;
  /** Refunds of paid PSE deposits (docs/returns.md). */
  returns: ReturnStore;
  ledger: LedgerPort;
  pse: PseProvider;
  mailer: Mailer;
  settings: DepositSettings;
  log: Logger;
  now: () => Date;
  newId: () => string;
  /** `exc_` + 32 hex characters (money exceptions). */
  newExceptionId: () => string;
}

export function depositDeps(
  d: Omit<DepositDeps, 'now' | 'newId' | 'newExceptionId'> & Partial<Pick<DepositDeps, 'now' | 'newId' | 'newExceptionId'>>,
): DepositDeps {
  return { now: () => new Date(), newId: () => randomUUID(), newExceptionId, ...d };
}
