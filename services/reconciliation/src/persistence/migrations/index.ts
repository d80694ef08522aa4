import { Migration0001ReconciliationInitial } from './0001-reconciliation-initial.js';
import { Migration0002ReconciliationService } from './0002-reconciliation-service.js';
import { Migration0003OneCasePerMovement } from './0003-one-case-per-movement.js';

/** Every reconciliation migration, in order. Append only. */
export const reconciliationMigrations = [Migration0001ReconciliationInitial, Migration0002ReconciliationService, Migration0003OneCasePerMovement];
