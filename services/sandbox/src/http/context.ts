import type { Logger } from '@wallet/platform';
import type { BrebCollect } from '../app/breb-collect.js';
import type { LookupKey } from '../app/directory.js';
import type { ValidateAchAccount } from '../app/ach-accounts.js';
import type { AchPrenotes } from '../app/ach-prenotes.js';
import type { PseLinks } from '../app/pse-links.js';
import type { RailTransfers } from '../app/rail-transfers.js';
import type { SettlementReports } from '../app/settlement-reports.js';
import type { CallbackDispatcher } from '../delivery/callback-dispatcher.js';
import type { EmailStore } from '../persistence/email.store.js';
import type { SandboxStore } from '../persistence/sandbox.store.js';

/** What the routes need: the use cases, the store (faults) and the dispatcher (redeliver, wake). */
export interface SandboxHttpDeps {
  lookupKey: LookupKey;
  /** Participants' key registrations and the inbound payments routed to them. */
  collect: BrebCollect;
  validateAchAccount: ValidateAchAccount;
  rails: RailTransfers;
  /** The ACH rail's prenotes (zero-value account checks) and their per-account behaviour switch. */
  prenotes: AchPrenotes;
  pse: PseLinks;
  /** The providers' daily settlement reports and their injected discrepancies. */
  reports: SettlementReports;
  emails: EmailStore;
  dispatcher: CallbackDispatcher;
  store: SandboxStore;
  log: Logger;
  /** false while shutting down: /readyz answers 503. */
  isReady(): boolean;
}
