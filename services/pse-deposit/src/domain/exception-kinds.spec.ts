import { depositV1 } from '@wallet/proto';
import { RETURN_EXCEPTION_KIND } from '@wallet/platform';
import { EXCEPTION_ACTIONS, EXCEPTION_KINDS } from './deposit-machine.js';

// The proto declares the kinds this service keeps (DepositExceptionKind); the gateway lists and
// routes by that declaration, so the kinds written here must be exactly its value names.
it('the kinds this service opens are the ones its proto declares', () => {
  const declared = Object.keys(depositV1.DepositExceptionKind).filter((k) => k !== 'UNSPECIFIED' && k !== 'UNRECOGNIZED');
  expect([...EXCEPTION_KINDS]).toEqual(declared);
});

// A return (devolución) the ledger would not close is parked by the shared return saga with this kind.
it("the shared return saga's kind is one of them, resolved by retry or dismiss", () => {
  expect(EXCEPTION_KINDS).toContain(RETURN_EXCEPTION_KIND);
  expect(EXCEPTION_ACTIONS[RETURN_EXCEPTION_KIND]).toEqual(['retry', 'dismiss']);
});
