import { Migration0001SandboxInitial } from './0001-sandbox-initial.js';
import { Migration0002SandboxPseSmtp } from './0002-sandbox-pse-smtp.js';
import { Migration0003SandboxBrebCollect } from './0003-sandbox-breb-collect.js';
import { Migration0004SandboxSettlementReports } from './0004-sandbox-settlement-reports.js';
import { Migration0005SandboxFaultVersions } from './0005-sandbox-fault-versions.js';
import { Migration0006SandboxRegistrationFeed } from './0006-sandbox-registration-feed.js';
import { Migration0007SandboxBrebReturns } from './0007-sandbox-breb-returns.js';
import { Migration0008SandboxBrebQr } from './0008-sandbox-breb-qr.js';
import { Migration0009SandboxBrebPartialReturns } from './0009-sandbox-breb-partial-returns.js';
import { Migration0010SandboxPseRefunds } from './0010-sandbox-pse-refunds.js';
import { Migration0011SandboxAchPrenotes } from './0011-sandbox-ach-prenotes.js';

/** Every sandbox migration, in order. Append only. */
export const sandboxMigrations = [
  Migration0001SandboxInitial,
  Migration0002SandboxPseSmtp,
  Migration0003SandboxBrebCollect,
  Migration0004SandboxSettlementReports,
  Migration0005SandboxFaultVersions,
  Migration0006SandboxRegistrationFeed,
  Migration0007SandboxBrebReturns,
  Migration0008SandboxBrebQr,
  Migration0009SandboxBrebPartialReturns,
  Migration0010SandboxPseRefunds,
  Migration0011SandboxAchPrenotes,
];
