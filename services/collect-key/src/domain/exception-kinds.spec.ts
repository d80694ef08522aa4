import { collectKeyV1 } from '@wallet/proto';
import { EXCEPTION_KINDS } from './payment-machine.js';

// The proto declares the kinds this service keeps (CollectKeyExceptionKind); the gateway lists and
// routes by that declaration, so the kinds written here must be exactly its value names.
it('the kinds this service opens are the ones its proto declares', () => {
  const declared = Object.keys(collectKeyV1.CollectKeyExceptionKind).filter((k) => k !== 'UNSPECIFIED' && k !== 'UNRECOGNIZED');
  expect([...EXCEPTION_KINDS]).toEqual(declared);
});
