import { Migration0001CollectKeyInitial } from './0001-collect-key-initial.js';
import { Migration0002KeyIvaApplicable } from './0002-key-iva-applicable.js';
import { Migration0003KeyRegistering } from './0003-key-registering.js';
import { Migration0004SettlementsIndex } from './0004-settlements-index.js';
import { Migration0005PaymentSaga } from './0005-payment-saga.js';
import { Migration0006KeyRegistrationAnchor } from './0006-key-registration-anchor.js';
import { Migration0007PaymentReturns } from './0007-payment-returns.js';
import { Migration0008TraceContext } from './0008-trace-context.js';
import { Migration0009CobroKeys } from './0009-cobro-keys.js';
import { Migration0010DepositReturns } from './0010-deposit-returns.js';
import { Migration0011ParkedReturnExceptions } from './0011-parked-return-exceptions.js';

/** Every collect-key migration, in order. Append only. */
export const collectKeyMigrations = [
  Migration0001CollectKeyInitial,
  Migration0002KeyIvaApplicable,
  Migration0003KeyRegistering,
  Migration0004SettlementsIndex,
  Migration0005PaymentSaga,
  Migration0006KeyRegistrationAnchor,
  Migration0007PaymentReturns,
  Migration0008TraceContext,
  Migration0009CobroKeys,
  Migration0010DepositReturns,
  Migration0011ParkedReturnExceptions,
];
