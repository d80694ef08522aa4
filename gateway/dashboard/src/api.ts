// The gateway's dashboard API (same origin, JSON, errors `{ error, message }` in Spanish) and the
// session kept in sessionStorage (gone when the tab closes).

export type Role = 'ADMIN' | 'OPERATOR' | 'VIEWER';
export type ApprovalStatus = 'PENDING' | 'APPROVED' | 'REJECTED' | 'EXPIRED';

export interface Me {
  id: string;
  email: string;
  role: Role;
  companyId: string;
  companyName: string;
}
export interface Signature {
  userId: string;
  email: string;
  role: Role;
  signedAt: string;
}
export interface Approval {
  approvalId: string;
  transactionId: string;
  /** Integer centavos. */
  amount: number | string;
  rail: 'BREB' | 'ACH';
  targetName: string;
  targetDocument: string;
  reference: string | null;
  threshold: number;
  signatures: Signature[];
  status: ApprovalStatus;
  createdAt: string;
  expiresAt: string;
  transactionStatus?: string | null;
  /** Optional extras of the gateway's presenter. */
  totalFee?: number | string;
  ivaAmount?: number | string;
  description?: string | null;
  decidedAt?: string | null;
  rejectReason?: string | null;
  /** The roles whose signatures count (the approval policy may ask ADMINs only). */
  approvalRoles?: Role[];
}

/** One version of the approval policy (docs/policies.md); `policy` is the document as JSON. */
export interface PolicyVersion {
  id: string;
  version: number;
  status: 'PROPOSED' | 'APPROVED' | 'CANCELLED';
  policy: unknown;
  requiredSignatures: number;
  proposedBy: string;
  signatures: Array<{ email: string; role: Role; signedAt: string }>;
  note: string | null;
  createdAt: string;
  decidedAt: string | null;
  decidedBy: string | null;
  effectiveAt: string | null;
}
export interface PolicyState {
  inForce: PolicyVersion | null;
  scheduled: PolicyVersion[];
  proposed: PolicyVersion | null;
  changeQuorum: number;
  changeDelaySeconds: number;
}
/** A counterparty (docs/counterparties.md) as the dashboard lists it. */
export interface Counterparty {
  id: string;
  name: string;
  rail: 'BREB' | 'ACH';
  brebKey: { keyType: string; keyValue: string } | null;
  bankAccount: { bankName: string; accountNumberMasked: string } | null;
  holderName: string;
  documentNumber: string;
  tags: string[];
  verification: { status: 'UNVERIFIED' | 'PENDING' | 'VERIFIED' | 'FAILED'; reason: string | null };
}

export interface ApprovalPage {
  items: Approval[];
  nextCursor?: string | null;
}

/** A bulk payout (docs/batches.md) as the dashboard reads it; amounts in integer centavos. */
export interface BatchTotal {
  rail: 'BREB' | 'ACH';
  count: number;
  amount: number;
  totalFee: number;
  ivaAmount: number;
  total: number;
}
export interface BatchApproval {
  approvalId: string;
  threshold: number;
  status: ApprovalStatus;
  signatures: Signature[];
  createdAt: string;
  expiresAt: string;
  decidedAt: string | null;
  rejectReason: string | null;
  rejectedBy: string | null;
}
export interface Batch {
  id: string;
  status: string;
  reference: string | null;
  description: string | null;
  itemCount: number;
  validCount: number;
  totals: BatchTotal[];
  createdAt: string;
  expiresAt: string;
  threshold: number;
  approval: BatchApproval | null;
  errorMessage: string | null;
}
export interface BatchItem {
  item: number;
  line: number | null;
  status: string;
  rail: 'BREB' | 'ACH' | null;
  amount: number;
  targetName: string;
  destination: string;
  reference: string | null;
}
export interface Page<T> {
  items: T[];
  nextCursor: string | null;
}

/** A cobro (docs/cobros.md) as the dashboard reads it; amounts in integer centavos. */
export type CobroStatus = 'OPEN' | 'PARTIALLY_PAID' | 'PAID' | 'EXPIRED' | 'CANCELLED';
export interface CobroPayment {
  depositId: string;
  source: 'BREB' | 'PSE';
  amountCents: number;
  netAmountCents: number;
  matchedBy: string;
  disposition: string;
  payerName: string | null;
  payerDocument: string | null;
  receivedAt: string;
  matchedAt: string;
  /** Returned to the payer since it was matched (once the payer has it). */
  returnedCents: number;
}
export interface Cobro {
  id: string;
  reference: string;
  status: CobroStatus;
  amountType: 'FIXED' | 'RANGE' | 'OPEN';
  amountCents: number | null;
  minAmountCents: number | null;
  maxAmountCents: number | null;
  paidAmountCents: number;
  description: string | null;
  expectedPayer: { document: string | null; name: string | null } | null;
  methods: string[];
  transactionId: string;
  pse: { depositId: string; paygatewayUrl: string } | null;
  breb: { keyValue: string; qrPayload: string; qrPngUrl: string } | null;
  payments: CobroPayment[];
  expiresAt: string;
  createdAt: string;
  paidAt: string | null;
  closedAt: string | null;
}
/** A return (devolución) of a payment to its payer (docs/returns.md); amounts as the API answers them (strings of centavos). */
export type ReturnReason = 'CUSTOMER_REQUEST' | 'DUPLICATE' | 'OVERPAYMENT' | 'FRAUD' | 'OTHER';
export interface DepositReturn {
  id: string;
  depositId: string;
  rail: 'BREB' | 'PSE';
  amountCents: string;
  reason: ReturnReason;
  description: string | null;
  status: 'PENDING' | 'RETURNED' | 'FAILED';
  failureCode: string | null;
  failureMessage: string | null;
  transactionId: string;
  depositAmountCents: string;
  returnedAmountCents: string;
  createdAt: string;
  returnedAt: string | null;
}
export interface NewReturn {
  /** Omitted: everything not yet returned of the payment. */
  amountCents?: number;
  reason: ReturnReason;
  description?: string;
  totpCode: string;
}

/** A credited payment that matched no cobro. */
export interface UnmatchedPayment {
  depositId: string;
  cobroId: string | null;
  reason: string;
  source: 'BREB' | 'PSE';
  amountCents: number;
  payerName: string | null;
  payerDocument: string | null;
  receivedAt: string;
  listedAt: string;
}

/** A dashboard invitation as its holder sees it (self-enrolment). */
export interface Invitation {
  email: string;
  role: Role;
  companyName: string;
  status: 'PENDING' | 'ACCEPTED';
  expiresAt: string;
}
export interface Enrolment {
  email: string;
  totpSecret: string;
  otpauthUrl: string;
  expiresAt: string;
}

/** A scheduled send or move (docs/schedules.md) as the dashboard reads it; amounts in integer centavos. */
export interface ScheduleRunRef {
  seq: number;
  nominalAt: string;
  dueAt: string;
}
export type Recurrence =
  | { kind: 'ONCE'; executeAt: string }
  | { kind: 'MONTHLY'; dayOfMonth: number; time: string }
  | { kind: 'LAST_BUSINESS_DAY'; time: string }
  | { kind: 'WEEKLY'; dayOfWeek: string; time: string }
  | { kind: 'CRON'; expression: string };
export interface ScheduleSend {
  amount: number;
  description?: string;
  targetName?: string;
  counterpartyId?: string;
  destination?: {
    brebKey?: { type: string; value: string };
    bankAccount?: { bankId: number; accountNumber: string; holderFirstName?: string; holderLastName?: string };
  };
}
export type ScheduleAction =
  | { kind: 'SEND'; send: ScheduleSend }
  | { kind: 'BATCH'; batch: { description?: string; mode: string; items: ScheduleSend[] } }
  | { kind: 'MOVE'; from: 'BREB' | 'ACH'; to: 'BREB' | 'ACH'; amountCents: number; description?: string }
  | { kind: 'TOP_UP'; from: 'BREB' | 'ACH'; to: 'BREB' | 'ACH'; targetBalanceCents: number; description?: string };
export interface Schedule {
  id: string;
  status: 'ACTIVE' | 'PAUSED' | 'CANCELLED' | 'COMPLETED';
  description: string | null;
  recurrence: Recurrence;
  businessDayRule: 'NONE' | 'PREVIOUS' | 'NEXT' | 'SKIP';
  startAt: string;
  endAt: string | null;
  maxRuns: number | null;
  action: ScheduleAction;
  runsStarted: number;
  nextRun: ScheduleRunRef | null;
  upcomingRuns: ScheduleRunRef[];
  createdAt: string;
}
export interface ScheduleRun extends ScheduleRunRef {
  id: string;
  status: 'STARTING' | 'STARTED' | 'FAILED' | 'SKIPPED';
  amountCents: number | null;
  transferId: string | null;
  walletMoveId: string | null;
  batchId: string | null;
  transferStatus: string | null;
  batchStatus: string | null;
  error: { code: string; message: string } | null;
}
export interface ScheduleProjection {
  from: string;
  until: string;
  wallets: Array<{
    rail: 'BREB' | 'ACH';
    availableCents: string;
    outflowCents: string;
    inflowCents: string;
    lowestBalanceCents: string;
    shortfallCents: string;
    firstShortfallAt: string | null;
  }>;
  runs: Array<
    ScheduleRunRef & { scheduleId: string; description: string | null; actionKind: string; rail: string; amountCents: string; balanceAfterCents: string }
  >;
  warnings: string[];
}

/** A wallet's balance alert (docs/balance-alerts.md) and a crossing of it. */
export interface BalanceAlert {
  rail: 'BREB' | 'ACH';
  enabled: boolean;
  lowThresholdCents: number | null;
  highThresholdCents: number | null;
  hysteresisCents: number;
  state: 'NORMAL' | 'LOW' | 'HIGH';
  availableCents: string;
  updatedAt: string | null;
}
export interface BalanceAlertEvent {
  id: string;
  rail: 'BREB' | 'ACH';
  kind: 'LOW' | 'RECOVERED' | 'HIGH' | 'NORMAL';
  state: 'NORMAL' | 'LOW' | 'HIGH';
  availableCents: string;
  thresholdCents: number;
  occurredAt: string;
}

export class ApiError extends Error {
  constructor(
    readonly status: number,
    readonly code: string,
    message: string,
    /** INVALID_REQUEST: each field refused and why (`details.fields`). */
    readonly fields: ReadonlyArray<{ path: string; message: string }> = [],
  ) {
    super(message);
  }
  /** The session is gone (expired, logged out elsewhere): back to the login form. A wrong TOTP code is also a 401 but not this. */
  get sessionLost(): boolean {
    return this.status === 401 && this.code !== 'INVALID_TOTP_CODE' && this.code !== 'INVALID_CREDENTIALS';
  }
}

export interface Session {
  token: string;
  expiresAt: string;
}

const SESSION_KEY = 'wallet.dashboard.session';

export function loadSession(): Session | undefined {
  try {
    const s = JSON.parse(sessionStorage.getItem(SESSION_KEY) ?? 'null') as Partial<Session> | null;
    if (typeof s?.token !== 'string' || typeof s.expiresAt !== 'string') return undefined;
    if (!(Date.parse(s.expiresAt) > Date.now())) {
      clearSession();
      return undefined;
    }
    return { token: s.token, expiresAt: s.expiresAt };
  } catch {
    return undefined;
  }
}
export function saveSession(s: Session): void {
  sessionStorage.setItem(SESSION_KEY, JSON.stringify(s));
}
export function clearSession(): void {
  sessionStorage.removeItem(SESSION_KEY);
}

export async function request<T>(method: 'GET' | 'POST', path: string, token?: string, body?: unknown): Promise<T> {
  const headers: Record<string, string> = { accept: 'application/json' };
  if (token) headers.authorization = `Bearer ${token}`;
  if (body !== undefined) headers['content-type'] = 'application/json';
  let res: Response;
  try {
    res = await fetch(path, { method, headers, body: body === undefined ? undefined : JSON.stringify(body), cache: 'no-store', credentials: 'omit' });
  } catch {
    throw new ApiError(0, 'NETWORK_ERROR', 'No se pudo conectar con el servidor. Revisa tu conexión e inténtalo de nuevo.');
  }
  const text = res.status === 204 ? '' : await res.text();
  let data: unknown;
  try {
    data = text ? JSON.parse(text) : undefined;
  } catch {
    data = undefined;
  }
  if (!res.ok) {
    const e = (data ?? {}) as { error?: unknown; message?: unknown; details?: { fields?: unknown } };
    const fields = Array.isArray(e.details?.fields)
      ? (e.details.fields as unknown[]).filter((f): f is { path: string; message: string } => typeof (f as { path?: unknown })?.path === 'string')
      : [];
    throw new ApiError(
      res.status,
      typeof e.error === 'string' ? e.error : `HTTP_${res.status}`,
      typeof e.message === 'string' && e.message ? e.message : `Ocurrió un error inesperado (HTTP ${res.status}). Inténtalo de nuevo.`,
      fields,
    );
  }
  return data as T;
}

/** An image the API answers with the session's token, as a `data:` URL (the page's CSP allows images from 'self' and data: only). */
export async function requestImage(path: string, token: string): Promise<string> {
  let res: Response;
  try {
    res = await fetch(path, { headers: { authorization: `Bearer ${token}`, accept: 'image/png' }, cache: 'no-store', credentials: 'omit' });
  } catch {
    throw new ApiError(0, 'NETWORK_ERROR', 'No se pudo conectar con el servidor. Revisa tu conexión e inténtalo de nuevo.');
  }
  if (!res.ok) {
    const e = (await res.json().catch(() => ({}))) as { error?: unknown; message?: unknown };
    throw new ApiError(
      res.status,
      typeof e.error === 'string' ? e.error : `HTTP_${res.status}`,
      typeof e.message === 'string' ? e.message : 'No se pudo cargar la imagen.',
    );
  }
  const blob = await res.blob();
  return new Promise((resolve, reject) => {
    const reader = new FileReader();
    reader.onload = () => resolve(String(reader.result));
    reader.onerror = () => reject(new ApiError(0, 'IMAGE_UNREADABLE', 'No se pudo mostrar la imagen.'));
    reader.readAsDataURL(blob);
  });
}

const query = (q: Record<string, string | undefined>) => {
  const p = new URLSearchParams();
  for (const [k, v] of Object.entries(q)) if (v) p.set(k, v);
  const s = p.toString();
  return s ? `?${s}` : '';
};

export const api = {
  login: (email: string, password: string) => request<Session>('POST', '/auth/login', undefined, { email, password }),
  me: (token: string) => request<Me>('GET', '/auth/me', token),
  logout: (token: string) => request<void>('POST', '/auth/logout', token),
  approvals: (token: string, status: ApprovalStatus, cursor?: string) =>
    request<ApprovalPage>('GET', `/dashboard/approvals?${new URLSearchParams(cursor ? { status, cursor } : { status }).toString()}`, token),
  sign: (token: string, approvalId: string, totpCode: string) =>
    request<Approval>('POST', `/dashboard/approvals/${encodeURIComponent(approvalId)}/sign`, token, { totpCode }),
  // The invitation token goes in the body, never in a URL: paths end up in access logs.
  invitation: (token: string) => request<Invitation>('POST', '/auth/invitations/lookup', undefined, { token }),
  acceptInvitation: (token: string, password: string) => request<Enrolment>('POST', '/auth/invitations/accept', undefined, { token, password }),
  confirmInvitation: (token: string, totpCode: string) => request<unknown>('POST', '/auth/invitations/confirm', undefined, { token, totpCode }),
  reject: (token: string, approvalId: string, totpCode: string, reason?: string) =>
    request<Approval>('POST', `/dashboard/approvals/${encodeURIComponent(approvalId)}/reject`, token, reason ? { totpCode, reason } : { totpCode }),
  batches: (token: string, state: string, cursor?: string) =>
    request<Page<Batch>>('GET', `/dashboard/batches?${new URLSearchParams(cursor ? { status: state, cursor } : { status: state }).toString()}`, token),
  batch: (token: string, batchId: string) => request<Batch>('GET', `/dashboard/batches/${encodeURIComponent(batchId)}`, token),
  batchItems: (token: string, batchId: string, limit: number, cursor?: string) =>
    request<Page<BatchItem>>(
      'GET',
      `/dashboard/batches/${encodeURIComponent(batchId)}/items?${new URLSearchParams(cursor ? { limit: String(limit), cursor } : { limit: String(limit) }).toString()}`,
      token,
    ),
  signBatch: (token: string, batchId: string, totpCode: string) =>
    request<Batch>('POST', `/dashboard/batches/${encodeURIComponent(batchId)}/sign`, token, { totpCode }),
  rejectBatch: (token: string, batchId: string, totpCode: string, reason?: string) =>
    request<Batch>('POST', `/dashboard/batches/${encodeURIComponent(batchId)}/reject`, token, reason ? { totpCode, reason } : { totpCode }),
  cobros: (token: string, q: { status?: string; reference?: string; cursor?: string; limit?: string }) =>
    request<Page<Cobro>>('GET', `/dashboard/cobros${query(q)}`, token),
  policy: (token: string) => request<PolicyState>('GET', '/dashboard/approval-policy', token),
  proposePolicy: (token: string, policy: unknown, totpCode: string, note?: string) =>
    request<PolicyVersion>('POST', '/dashboard/approval-policy', token, note ? { policy, note, totpCode } : { policy, totpCode }),
  signPolicy: (token: string, id: string, totpCode: string) =>
    request<PolicyVersion>('POST', `/dashboard/approval-policy/${encodeURIComponent(id)}/sign`, token, { totpCode }),
  cancelPolicy: (token: string, id: string, totpCode: string) =>
    request<PolicyVersion>('POST', `/dashboard/approval-policy/${encodeURIComponent(id)}/cancel`, token, { totpCode }),
  counterparties: (token: string, cursor?: string) => request<Page<Counterparty>>('GET', `/dashboard/counterparties${query({ cursor })}`, token),
  cobro: (token: string, id: string) => request<Cobro>('GET', `/dashboard/cobros/${encodeURIComponent(id)}`, token),
  cobroQr: (token: string, id: string) => requestImage(`/dashboard/cobros/${encodeURIComponent(id)}/qr.png`, token),
  unmatchedPayments: (token: string, cursor?: string) =>
    request<Page<UnmatchedPayment>>('GET', `/dashboard/cobros/unmatched-payments${query({ cursor })}`, token),
  attachPayment: (token: string, cobroId: string, depositId: string, totpCode: string) =>
    request<Cobro>('POST', `/dashboard/cobros/${encodeURIComponent(cobroId)}/payments`, token, { depositId, totpCode }),
  depositReturns: (token: string, depositId: string) =>
    request<{ items: DepositReturn[] }>('GET', `/dashboard/deposits/${encodeURIComponent(depositId)}/returns`, token),
  createReturn: (token: string, depositId: string, body: NewReturn) =>
    request<DepositReturn>('POST', `/dashboard/deposits/${encodeURIComponent(depositId)}/returns`, token, body),
  schedules: (token: string, q: { status?: string; cursor?: string }) => request<Page<Schedule>>('GET', `/dashboard/schedules${query(q)}`, token),
  scheduleRuns: (token: string, id: string, cursor?: string) =>
    request<Page<ScheduleRun>>('GET', `/dashboard/schedules/${encodeURIComponent(id)}/runs${query({ cursor })}`, token),
  scheduleProjection: (token: string, days: number) =>
    request<ScheduleProjection>('GET', `/dashboard/schedules/projection${query({ days: String(days) })}`, token),
  balanceAlerts: (token: string) => request<{ items: BalanceAlert[] }>('GET', '/dashboard/wallets/alerts', token),
  balanceAlertHistory: (token: string, q: { rail?: string; cursor?: string }) =>
    request<Page<BalanceAlertEvent> & { hasMore: boolean }>('GET', `/dashboard/wallets/alerts/history${query(q)}`, token),
};
