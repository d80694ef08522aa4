import type { AsyncService } from '@wallet/platform';
import type { transferV1 } from '@wallet/proto';
import type { TransferUseCases } from '../app/use-cases.js';
/**
 * The TransferService RPCs: decode, call one use case, encode. The company always comes from the
 * call's `x-company-id` metadata (ctx.companyId); its profile (tax regime, NIT, limits) from the
 * request, set by the gateway that authenticated it. Errors are AppErrors mapped to gRPC once.
 */
export declare function transferHandlers(uc: TransferUseCases): AsyncService<transferV1.TransferServiceServer>;
