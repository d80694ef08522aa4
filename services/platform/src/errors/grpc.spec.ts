import { Metadata, status } from '@grpc/grpc-js';
import { AppError, ERRORS } from './catalogue.js';
import { fromGrpcError, toGrpcError } from './grpc.js';

describe('error mapping across gRPC', () => {
  it('round-trips a catalogue error with its details', () => {
    const wire = toGrpcError(new AppError('INSUFFICIENT_BALANCE', undefined, { needed: '100' }));
    expect(wire.code).toBe(status.FAILED_PRECONDITION);
    const back = fromGrpcError(wire);
    expect(back.code).toBe('INSUFFICIENT_BALANCE');
    expect(back.message).toBe(ERRORS.INSUFFICIENT_BALANCE.message);
    expect(back.details).toEqual({ needed: '100' });
  });

  it('hides unknown errors as INTERNAL_ERROR without their text', () => {
    const wire = toGrpcError(new Error('relation "ledger.wallets" does not exist at 10.0.0.3'));
    expect(wire.code).toBe(status.INTERNAL);
    expect(wire.details).toBe(ERRORS.INTERNAL_ERROR.message);
    expect(fromGrpcError(wire).code).toBe('INTERNAL_ERROR');
  });

  it('reads transport failures as SERVICE_UNAVAILABLE', () => {
    expect(fromGrpcError({ code: status.UNAVAILABLE, details: 'connect ECONNREFUSED 10.1.2.3:50051', metadata: new Metadata() }).code).toBe(
      'SERVICE_UNAVAILABLE',
    );
    const late = fromGrpcError({ code: status.DEADLINE_EXCEEDED, details: 'Deadline exceeded after 5.001s', metadata: new Metadata() });
    expect(late.code).toBe('SERVICE_UNAVAILABLE');
    // Which failure it was is kept for the log (the client's message is the catalogue's).
    expect(late.cause).toEqual({ grpcCode: 'DEADLINE_EXCEEDED', grpcDetails: 'Deadline exceeded after 5.001s' });
    expect(late.message).toBe(ERRORS.SERVICE_UNAVAILABLE.message);
  });

  it('every catalogue entry has a Spanish message and a sane HTTP status', () => {
    for (const [code, e] of Object.entries(ERRORS)) {
      expect(code).toMatch(/^[A-Z][A-Z0-9_]+$/);
      expect(e.message.length).toBeGreaterThan(10);
      expect(e.http).toBeGreaterThanOrEqual(400);
      expect(e.http).toBeLessThan(600);
    }
  });
});
