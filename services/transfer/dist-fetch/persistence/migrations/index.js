import { Migration0001TransferInitial } from './0001-transfer-initial.js';
import { Migration0002Approvals } from './0002-approvals.js';
/** Every transfer migration, in order. Append only. */
export const transferMigrations = [Migration0001TransferInitial, Migration0002Approvals];
//# sourceMappingURL=index.js.map