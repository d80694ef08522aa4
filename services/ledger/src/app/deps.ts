import { randomUUID } from 'node:crypto';
import { currentTraceparent } from '@wallet/platform';
import type { EventPublisher, LedgerStore } from './ports.js';

/** What every use case is built from: its ports plus the clock and id source (replaceable in tests). */
export interface LedgerDeps {
  store: LedgerStore;
  events: EventPublisher;
  now: () => Date;
  newId: () => string;
  traceparent: () => string | undefined;
}

export function ledgerDeps(store: LedgerStore, events: EventPublisher): LedgerDeps {
  return { store, events, now: () => new Date(), newId: randomUUID, traceparent: currentTraceparent };
}
