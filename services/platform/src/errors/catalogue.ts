import { status as GrpcStatus } from '@grpc/grpc-js';

/**
 * The one error catalogue (habit 4). A domain error carries a code from here; one place maps it
 * to gRPC (errors/grpc.ts), one place maps it to HTTP (the gateway), with the Spanish message.
 */
export const ERRORS = {
  // Request shape
  INVALID_REQUEST: { http: 400, grpc: GrpcStatus.INVALID_ARGUMENT, message: 'La solicitud no es válida.' },
  DESTINATION_REJECTED: { http: 400, grpc: GrpcStatus.INVALID_ARGUMENT, message: 'El banco o la cuenta de destino fue rechazado por las reglas internas.' },
  ROUTE_NOT_FOUND: { http: 404, grpc: GrpcStatus.UNIMPLEMENTED, message: 'La ruta solicitada no existe.' },
  PAYLOAD_TOO_LARGE: { http: 413, grpc: GrpcStatus.INVALID_ARGUMENT, message: 'El cuerpo de la solicitud supera el tamaño máximo permitido (1 MiB).' },
  REQUEST_TIMEOUT: { http: 408, grpc: GrpcStatus.DEADLINE_EXCEEDED, message: 'La solicitud no llegó completa a tiempo; envíela de nuevo.' },
  HEADERS_TOO_LARGE: { http: 431, grpc: GrpcStatus.INVALID_ARGUMENT, message: 'Los encabezados de la solicitud son demasiado grandes.' },
  UNSUPPORTED_MEDIA_TYPE: { http: 415, grpc: GrpcStatus.INVALID_ARGUMENT, message: 'El tipo de contenido no es compatible; use application/json.' },
  UNSUPPORTED_API_VERSION: {
    http: 400,
    grpc: GrpcStatus.INVALID_ARGUMENT,
    message: 'Versión de API no soportada; use una de las versiones indicadas en details.supported (encabezado Wallet-Version, AAAA-MM-DD).',
  },
  // Authentication and authorization
  AUTH_REQUIRED: { http: 401, grpc: GrpcStatus.UNAUTHENTICATED, message: 'Falta el encabezado Authorization.' },
  INVALID_API_KEY: { http: 401, grpc: GrpcStatus.UNAUTHENTICATED, message: 'La clave de API no es válida o fue revocada.' },
  INVALID_SIGNATURE: { http: 401, grpc: GrpcStatus.UNAUTHENTICATED, message: 'La firma de la notificación no es válida.' },
  INVALID_ADMIN_TOKEN: { http: 401, grpc: GrpcStatus.UNAUTHENTICATED, message: 'El token de administración no es válido.' },
  INVALID_CREDENTIALS: { http: 401, grpc: GrpcStatus.UNAUTHENTICATED, message: 'Credenciales inválidas.' },
  INVALID_TOTP_CODE: { http: 401, grpc: GrpcStatus.UNAUTHENTICATED, message: 'El código de verificación no es válido.' },
  SESSION_EXPIRED: { http: 401, grpc: GrpcStatus.UNAUTHENTICATED, message: 'La sesión expiró o fue cerrada; inicie sesión de nuevo.' },
  OPERATOR_AUTH_FAILED: { http: 401, grpc: GrpcStatus.UNAUTHENTICATED, message: 'Credenciales de operador inválidas.' },
  OPERATOR_ENROLLMENT_INVALID: { http: 401, grpc: GrpcStatus.UNAUTHENTICATED, message: 'El enlace de registro del operador no es válido, ya se usó o expiró.' },
  COMPANY_INACTIVE: { http: 403, grpc: GrpcStatus.PERMISSION_DENIED, message: 'La cuenta de la empresa está suspendida.' },
  INSUFFICIENT_SCOPE: { http: 403, grpc: GrpcStatus.PERMISSION_DENIED, message: 'La clave de API no tiene el alcance requerido para esta operación.' },
  API_KEY_AUTH_NOT_ALLOWED: {
    http: 403,
    grpc: GrpcStatus.PERMISSION_DENIED,
    message: 'Esta operación requiere una sesión del panel; las claves de API no están permitidas.',
  },
  INSUFFICIENT_ROLE: { http: 403, grpc: GrpcStatus.PERMISSION_DENIED, message: 'Su rol no permite realizar esta operación.' },
  ADMIN_TOKEN_NOT_ALLOWED: {
    http: 403,
    grpc: GrpcStatus.PERMISSION_DENIED,
    message: 'El token compartido de administración no está permitido para esta operación; inicie sesión como operador.',
  },
  SAME_OPERATOR: {
    http: 403,
    grpc: GrpcStatus.PERMISSION_DENIED,
    message: 'La solicitud debe aprobarla un operador distinto e independiente de quien la hizo.',
  },
  RATE_LIMIT_EXCEEDED: { http: 429, grpc: GrpcStatus.RESOURCE_EXHAUSTED, message: 'Demasiadas solicitudes; intente de nuevo más tarde.' },
  /** A dashboard user (by e-mail) after too many wrong passwords or TOTP codes; `details.retryAfter` and Retry-After say how long. */
  ACCOUNT_LOCKED: {
    http: 423,
    grpc: GrpcStatus.RESOURCE_EXHAUSTED,
    message: 'La cuenta está bloqueada temporalmente por demasiados intentos fallidos. Intente de nuevo más tarde.',
  },
  // Not found
  COMPANY_NOT_FOUND: { http: 404, grpc: GrpcStatus.NOT_FOUND, message: 'La empresa no existe.' },
  EXCEPTION_NOT_FOUND: { http: 404, grpc: GrpcStatus.NOT_FOUND, message: 'La excepción no existe.' },
  RECONCILIATION_NOT_FOUND: { http: 404, grpc: GrpcStatus.NOT_FOUND, message: 'La conciliación no existe.' },
  BATCH_NOT_FOUND: { http: 404, grpc: GrpcStatus.NOT_FOUND, message: 'El lote de transferencias no existe.' },
  API_KEY_NOT_FOUND: { http: 404, grpc: GrpcStatus.NOT_FOUND, message: 'La clave de API no existe.' },
  WALLET_NOT_PROVISIONED: { http: 404, grpc: GrpcStatus.NOT_FOUND, message: 'La empresa no tiene billeteras aprovisionadas.' },
  FAST_WALLET_MISSING: { http: 404, grpc: GrpcStatus.NOT_FOUND, message: 'Falta la billetera BREB de la empresa.' },
  TRANSACTION_NOT_FOUND: { http: 404, grpc: GrpcStatus.NOT_FOUND, message: 'La transacción no existe.' },
  DEPOSIT_NOT_FOUND: { http: 404, grpc: GrpcStatus.NOT_FOUND, message: 'El depósito no existe.' },
  RECEIPT_NOT_FOUND: {
    http: 404,
    grpc: GrpcStatus.NOT_FOUND,
    message: 'No encontramos un comprobante emitido con ese número y esa huella: revise que el enlace o el código QR estén completos.',
  },
  KEY_NOT_FOUND: { http: 404, grpc: GrpcStatus.NOT_FOUND, message: 'La llave de cobro no existe.' },
  QR_NOT_FOUND: { http: 404, grpc: GrpcStatus.NOT_FOUND, message: 'El código QR no existe.' },
  COBRO_NOT_FOUND: { http: 404, grpc: GrpcStatus.NOT_FOUND, message: 'El cobro no existe.' },
  WALLET_MOVE_NOT_FOUND: { http: 404, grpc: GrpcStatus.NOT_FOUND, message: 'El movimiento entre billeteras no existe.' },
  SCHEDULE_NOT_FOUND: { http: 404, grpc: GrpcStatus.NOT_FOUND, message: 'El programa de pagos no existe.' },
  SCHEDULE_ENDED: { http: 409, grpc: GrpcStatus.FAILED_PRECONDITION, message: 'El programa de pagos ya terminó o fue cancelado; no se puede modificar.' },
  COUNTERPARTY_NOT_FOUND: { http: 404, grpc: GrpcStatus.NOT_FOUND, message: 'Contraparte no encontrada.' },
  POLICY_VERSION_NOT_FOUND: { http: 404, grpc: GrpcStatus.NOT_FOUND, message: 'La versión de la política de aprobación no existe.' },
  APPROVAL_NOT_FOUND: { http: 404, grpc: GrpcStatus.NOT_FOUND, message: 'La aprobación no existe.' },
  USER_NOT_FOUND: { http: 404, grpc: GrpcStatus.NOT_FOUND, message: 'El usuario no existe.' },
  INVITATION_NOT_FOUND: { http: 404, grpc: GrpcStatus.NOT_FOUND, message: 'La invitación no existe.' },
  AML_ENTRY_NOT_FOUND: { http: 404, grpc: GrpcStatus.NOT_FOUND, message: 'La entrada de la lista de control no existe.' },
  HOLD_NOT_FOUND: { http: 404, grpc: GrpcStatus.NOT_FOUND, message: 'La reserva de fondos no existe.' },
  WEBHOOK_ENDPOINT_NOT_FOUND: { http: 404, grpc: GrpcStatus.NOT_FOUND, message: 'El endpoint de webhook no existe.' },
  WEBHOOK_DELIVERY_NOT_FOUND: { http: 404, grpc: GrpcStatus.NOT_FOUND, message: 'La entrega de webhook no existe.' },
  OPERATOR_NOT_FOUND: { http: 404, grpc: GrpcStatus.NOT_FOUND, message: 'El operador no existe.' },
  APPROVAL_REQUEST_NOT_FOUND: { http: 404, grpc: GrpcStatus.NOT_FOUND, message: 'La solicitud de aprobación no existe.' },
  CREDIT_REQUEST_NOT_FOUND: { http: 404, grpc: GrpcStatus.NOT_FOUND, message: 'La solicitud de crédito no existe.' },
  // Conflicts
  REFERENCE_CONFLICT: { http: 409, grpc: GrpcStatus.ALREADY_EXISTS, message: 'La referencia ya se usó con una solicitud diferente.' },
  IDEMPOTENCY_KEY_REUSED: { http: 409, grpc: GrpcStatus.ALREADY_EXISTS, message: 'La clave de idempotencia ya se usó con una solicitud diferente.' },
  IDEMPOTENCY_KEY_IN_USE: {
    http: 409,
    grpc: GrpcStatus.ABORTED,
    message: 'Una solicitud con la misma clave de idempotencia aún está en proceso; intente de nuevo en unos segundos.',
  },
  COUNTERPARTY_VERIFICATION_IN_PROGRESS: {
    http: 409,
    grpc: GrpcStatus.FAILED_PRECONDITION,
    message: 'La verificación de la contraparte está en curso; espere su resultado antes de pedir otra.',
  },
  /** docs/policies.md: one change of the approval policy at a time. */
  POLICY_CHANGE_PENDING: {
    http: 409,
    grpc: GrpcStatus.FAILED_PRECONDITION,
    message: 'Ya hay un cambio de la política de aprobación esperando firmas; fírmelo o cancélelo antes de proponer otro.',
  },
  POLICY_CHANGE_NOT_PENDING: {
    http: 409,
    grpc: GrpcStatus.FAILED_PRECONDITION,
    message: 'El cambio de la política de aprobación ya fue decidido; no admite más firmas.',
  },
  KEY_NOT_ACTIVE: { http: 409, grpc: GrpcStatus.FAILED_PRECONDITION, message: 'La llave de cobro no está activa.' },
  KEY_ALREADY_REGISTERED: { http: 409, grpc: GrpcStatus.ALREADY_EXISTS, message: 'El valor de la llave ya está registrado.' },
  ALREADY_SIGNED: { http: 409, grpc: GrpcStatus.ALREADY_EXISTS, message: 'Este usuario ya firmó la aprobación.' },
  APPROVAL_NOT_PENDING: {
    http: 409,
    grpc: GrpcStatus.FAILED_PRECONDITION,
    message: 'La aprobación ya fue decidida (aprobada o rechazada); no admite más firmas.',
  },
  USER_ALREADY_ACTIVE: {
    http: 409,
    grpc: GrpcStatus.FAILED_PRECONDITION,
    message: 'El usuario ya activó su cuenta o está deshabilitado; no se le puede enviar una invitación.',
  },
  DEPOSIT_NOT_PENDING: { http: 409, grpc: GrpcStatus.FAILED_PRECONDITION, message: 'El depósito ya no está pendiente de pago.' },
  INVALID_STATE_TRANSITION: { http: 409, grpc: GrpcStatus.FAILED_PRECONDITION, message: 'La operación no es válida en el estado actual.' },
  EXCEPTION_NOT_OPEN: { http: 409, grpc: GrpcStatus.FAILED_PRECONDITION, message: 'La excepción ya fue resuelta o se está resolviendo con otra acción.' },
  /** A re-run (resolve action `rerun`) still finds the break in the provider's report. */
  /** One correction per external movement: another case already posted the correcting entry of this external movement (details.caseId). */
  MOVEMENT_ALREADY_CORRECTED: {
    http: 409,
    grpc: GrpcStatus.ALREADY_EXISTS,
    message: 'Este movimiento ya fue corregido por otro caso; no admite una segunda corrección.',
  },
  /** accept_provider waits for the owner: refused while the owner's record is not final, has an open money exception or a money step owed. */
  CASE_NOT_FINAL: {
    http: 409,
    grpc: GrpcStatus.FAILED_PRECONDITION,
    message: 'El registro del movimiento aún no es final (pendiente, con una excepción abierta o con un paso de dinero por completar); resuélvalo primero.',
  },
  BREAK_STILL_PRESENT: {
    http: 409,
    grpc: GrpcStatus.FAILED_PRECONDITION,
    message: 'La diferencia sigue en el reporte del proveedor; la conciliación se ejecutó de nuevo y la excepción sigue abierta.',
  },
  /** The provider has not published the report of that date yet (POST /admin/reconciliations for a future date). */
  REPORT_NOT_AVAILABLE: { http: 409, grpc: GrpcStatus.FAILED_PRECONDITION, message: 'El proveedor aún no publica el reporte de esa fecha.' },
  APPROVAL_REQUEST_NOT_PENDING: {
    http: 409,
    grpc: GrpcStatus.FAILED_PRECONDITION,
    message: 'La solicitud de aprobación ya fue decidida o venció; no admite otra decisión.',
  },
  APPROVAL_DELAY_PENDING: {
    http: 409,
    grpc: GrpcStatus.FAILED_PRECONDITION,
    message: 'El cambio debilita un control: solo puede aprobarse cuando termine el plazo de aviso a la empresa.',
  },
  COMPANY_ADMIN_REQUIRED: {
    http: 409,
    grpc: GrpcStatus.FAILED_PRECONDITION,
    message: 'La empresa no tiene un administrador activo del panel a quien entregar la credencial.',
  },
  /** A company (or the platform) already has the most webhook endpoints it may have (details.limit); delete one first. */
  WEBHOOK_ENDPOINT_LIMIT_REACHED: {
    http: 409,
    grpc: GrpcStatus.FAILED_PRECONDITION,
    message: 'Se alcanzó el máximo de endpoints de webhook; elimine uno antes de crear otro.',
  },
  CREDIT_REQUEST_NOT_PENDING: { http: 409, grpc: GrpcStatus.FAILED_PRECONDITION, message: 'La solicitud de crédito ya fue decidida; no admite otra decisión.' },
  /** Internal (ledger → transfer): a Reserve whose key was voided because its send was given up. */
  RESERVE_VOIDED: { http: 409, grpc: GrpcStatus.FAILED_PRECONDITION, message: 'La reserva de fondos fue anulada: la transferencia ya no se procesa.' },
  // Gone (410): a dashboard invitation that can no longer be redeemed
  INVITATION_EXPIRED: { http: 410, grpc: GrpcStatus.FAILED_PRECONDITION, message: 'La invitación expiró o fue anulada; pida una nueva al administrador.' },
  INVITATION_USED: { http: 410, grpc: GrpcStatus.FAILED_PRECONDITION, message: 'La invitación ya fue usada; no se puede usar de nuevo.' },
  // Business rules (422)
  /** Well-formed but not acceptable (e.g. POST /admin/reconciliations for a date after today in Bogotá); `details.fields` says which. */
  VALIDATION_ERROR: { http: 422, grpc: GrpcStatus.INVALID_ARGUMENT, message: 'La solicitud no cumple las reglas de validación.' },
  INVALID_KEY: { http: 422, grpc: GrpcStatus.FAILED_PRECONDITION, message: 'La llave Bre-B no tiene un formato válido.' },
  KEY_INACTIVE: { http: 422, grpc: GrpcStatus.FAILED_PRECONDITION, message: 'La llave Bre-B existe pero no está activa.' },
  /** A return (devolución) of an inflow: the sum of its returns would exceed the payment's gross (details: grossCents, returnedCents, returnableCents). */
  RETURN_EXCEEDS_PAYMENT: {
    http: 422,
    grpc: GrpcStatus.FAILED_PRECONDITION,
    message: 'El monto supera lo que queda por devolver de este pago.',
  },
  INSUFFICIENT_BALANCE: { http: 422, grpc: GrpcStatus.FAILED_PRECONDITION, message: 'El saldo disponible no cubre el monto más la comisión y el IVA.' },
  TARGET_DOCUMENT_REQUIRED: { http: 422, grpc: GrpcStatus.FAILED_PRECONDITION, message: 'El documento del destinatario es obligatorio.' },
  AMOUNT_EXCEEDS_BREB_CAP: { http: 422, grpc: GrpcStatus.FAILED_PRECONDITION, message: 'El monto supera el tope individual BREB de 12 millones de pesos.' },
  AMOUNT_EXCEEDS_ACH_CAP: { http: 422, grpc: GrpcStatus.FAILED_PRECONDITION, message: 'El monto supera el tope individual ACH de 2.000 millones de pesos.' },
  NAME_MISMATCH: { http: 422, grpc: GrpcStatus.FAILED_PRECONDITION, message: 'El nombre indicado no coincide con el titular de la llave Bre-B.' },
  INVALID_BANK_ACCOUNT: { http: 422, grpc: GrpcStatus.FAILED_PRECONDITION, message: 'La validación de la cuenta bancaria falló.' },
  FEE_EXCEEDS_AMOUNT: { http: 422, grpc: GrpcStatus.FAILED_PRECONDITION, message: 'La comisión más el IVA es igual o mayor que el monto.' },
  RECIPIENT_BLACKLISTED: { http: 422, grpc: GrpcStatus.FAILED_PRECONDITION, message: 'Una de las partes está en la lista de control de lavado de activos.' },
  APPROVAL_EXPIRED: { http: 422, grpc: GrpcStatus.FAILED_PRECONDITION, message: 'La aprobación expiró; la transferencia fue revertida.' },
  /** docs/policies.md: a rule of the company's approval policy refuses the payment; `details` name the rule, its code and message. */
  POLICY_REFUSED: { http: 422, grpc: GrpcStatus.FAILED_PRECONDITION, message: 'La política de aprobación de la empresa no permite esta transferencia.' },
  COUNTERPARTY_DAILY_LIMIT_EXCEEDED: { http: 422, grpc: GrpcStatus.FAILED_PRECONDITION, message: 'Se superó el límite diario para este destinatario.' },
  COUNTERPARTY_MONTHLY_LIMIT_EXCEEDED: { http: 422, grpc: GrpcStatus.FAILED_PRECONDITION, message: 'Se superó el límite mensual para este destinatario.' },
  // Upstream / availability
  BREB_DIRECTORY_LOOKUP_FAILED: { http: 503, grpc: GrpcStatus.UNAVAILABLE, message: 'El directorio Bre-B no responde; intente de nuevo.' },
  ACH_RAIL_UNAVAILABLE: { http: 503, grpc: GrpcStatus.UNAVAILABLE, message: 'La red ACH no está disponible; intente de nuevo.' },
  PSE_PROVIDER_NOT_CONFIGURED: { http: 503, grpc: GrpcStatus.UNAVAILABLE, message: 'El proveedor PSE no está configurado.' },
  PSE_INFLOW_DISABLED: { http: 503, grpc: GrpcStatus.UNAVAILABLE, message: 'Los recaudos PSE están bloqueados temporalmente.' },
  PSE_PROVIDER_ERROR: { http: 502, grpc: GrpcStatus.UNAVAILABLE, message: 'El proveedor PSE falló; intente de nuevo.' },
  SERVICE_UNAVAILABLE: { http: 503, grpc: GrpcStatus.UNAVAILABLE, message: 'El servicio no está disponible temporalmente; intente de nuevo.' },
  /** Internal (service to service): a gRPC caller without a mesh identity, or one the method does not allow. Reaches clients as 500. */
  CALLER_NOT_AUTHENTICATED: { http: 500, grpc: GrpcStatus.UNAUTHENTICATED, message: 'Ocurrió un error interno; intente de nuevo más tarde.' },
  CALLER_NOT_ALLOWED: { http: 500, grpc: GrpcStatus.PERMISSION_DENIED, message: 'Ocurrió un error interno; intente de nuevo más tarde.' },
  INTERNAL_ERROR: { http: 500, grpc: GrpcStatus.INTERNAL, message: 'Ocurrió un error interno; intente de nuevo más tarde.' },
} as const satisfies Record<string, { http: number; grpc: GrpcStatus; message: string }>;

export type ErrorCode = keyof typeof ERRORS;

export function isErrorCode(code: unknown): code is ErrorCode {
  return typeof code === 'string' && Object.prototype.hasOwnProperty.call(ERRORS, code);
}

/** A failure the client can act on: a catalogue code, optionally a more precise Spanish message and details. */
export class AppError extends Error {
  readonly code: ErrorCode;
  readonly details: Record<string, unknown> | undefined;
  constructor(code: ErrorCode, message?: string, details?: Record<string, unknown>) {
    super(message ?? ERRORS[code].message);
    this.name = 'AppError';
    this.code = code;
    this.details = details;
  }
  get httpStatus(): number {
    return ERRORS[this.code].http;
  }
}

export interface FieldProblem {
  path: string;
  message: string;
}

export function invalidRequest(fields: FieldProblem[], message?: string): AppError {
  return new AppError('INVALID_REQUEST', message ?? ERRORS.INVALID_REQUEST.message, { fields });
}

/** Collects every problem of a request, then fails once with all of them (400 INVALID_REQUEST, `details.fields`). */
export class Problems {
  private readonly list: FieldProblem[] = [];
  add(path: string, message: string): this {
    this.list.push({ path, message });
    return this;
  }
  get empty(): boolean {
    return this.list.length === 0;
  }
  /** How many problems so far (a caller can tell whether a sub-check added any). */
  get count(): number {
    return this.list.length;
  }
  throwIfAny(): void {
    if (this.list.length > 0) throw invalidRequest(this.list);
  }
}
