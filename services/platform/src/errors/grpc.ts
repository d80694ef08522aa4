import { Metadata, status as GrpcStatus, type ServiceError } from '@grpc/grpc-js';
import { AppError, ERRORS, isErrorCode } from './catalogue.js';

const CODE_KEY = 'x-error-code';
const DETAILS_KEY = 'x-error-details-bin';

/** AppError → gRPC status + trailers. Anything else becomes INTERNAL with no internals exposed. */
export function toGrpcError(err: unknown): Partial<ServiceError> {
  const app = err instanceof AppError ? err : new AppError('INTERNAL_ERROR');
  const metadata = new Metadata();
  metadata.set(CODE_KEY, app.code);
  if (app.details) metadata.set(DETAILS_KEY, Buffer.from(JSON.stringify(app.details)));
  return { code: ERRORS[app.code].grpc, details: app.message, metadata };
}

/** gRPC failure → AppError. Transport failures (unavailable, deadline) read as SERVICE_UNAVAILABLE. */
export function fromGrpcError(err: unknown): AppError {
  if (err instanceof AppError) return err;
  const se = err as Partial<ServiceError>;
  const code = se.metadata?.get(CODE_KEY)?.[0];
  if (isErrorCode(code)) {
    const raw = se.metadata?.get(DETAILS_KEY)?.[0];
    let details: Record<string, unknown> | undefined;
    if (raw) {
      try {
        details = JSON.parse(Buffer.isBuffer(raw) ? raw.toString('utf8') : String(raw));
      } catch {
        details = undefined;
      }
    }
    return new AppError(code, se.details || undefined, details);
  }
  if (se.code === GrpcStatus.UNAVAILABLE || se.code === GrpcStatus.DEADLINE_EXCEEDED || se.code === GrpcStatus.CANCELLED) {
    // Which transport failure it was stays with the error (for the logs, never for a client).
    const e = new AppError('SERVICE_UNAVAILABLE');
    e.cause = { grpcCode: GrpcStatus[se.code], grpcDetails: se.details };
    return e;
  }
  return new AppError('INTERNAL_ERROR');
}
