import { MoneyExceptionSchema } from './schemas.js';

// The kinds come from the owners' protos (`…ExceptionKind`); their text is what the API answers and
// what the services store, so the list must read exactly as it did when it was written out here.
describe('money-exception kinds', () => {
  it("are the owners' kinds, in the same order and spelling", () => {
    expect(MoneyExceptionSchema.shape.kind.options).toEqual([
      'RAIL_COMPLETED_AFTER_RELEASE',
      'RAIL_FAILED_AFTER_COMPLETION',
      'DISPATCH_OUTCOME_UNKNOWN',
      'COMMIT_REFUSED',
      'RELEASE_REFUSED',
      'PAID_AFTER_EXPIRY',
      'PAID_AFTER_FAILURE',
      'FAILED_AFTER_PAYMENT',
      'REVERSED_WITHOUT_PAYMENT',
      'CREDIT_REFUSED',
      'REVERSAL_REFUSED',
      'RETURN_CLOSE_REFUSED',
      'RETURN_REFUSED',
      'MISSING_AT_PROVIDER',
      'MISSING_IN_OUR_BOOKS',
      'AMOUNT_MISMATCH',
      'STATUS_MISMATCH',
      'DUPLICATE',
      'VALUE_DATE_MISMATCH',
    ]);
  });
});
