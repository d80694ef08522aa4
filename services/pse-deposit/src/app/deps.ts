import { randomUUID } from 'node:crypto';
import type { Logger } from '@wallet/platform';
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
  ledger: LedgerPort;
  pse: PseProvider;
  mailer: Mailer;
  settings: DepositSettings;
  log: Logger;
  now: () => Date;
  newId: () => string;
}

export function depositDeps(d: Omit<DepositDeps, 'now' | 'newId'> & Partial<Pick<DepositDeps, 'now' | 'newId'>>): DepositDeps {
  return { now: () => new Date(), newId: () => randomUUID(), ...d };
}
