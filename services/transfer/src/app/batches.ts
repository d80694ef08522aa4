import { AppError, PeriodicTask } from '@wallet/platform';
import { transferEventsV1, type transferV1 } from '@wallet/proto';
import {
  BATCH_STATES, BATCH_TTL_MS, MAX_BATCH_ITEMS, finalBatchState, publicBatchState,
  type BatchItemDraft, type BatchItemRecord, type BatchMode, type BatchRecord, type BatchSource, type BatchState, type BatchSummary, type ItemStatus,
} from '../domain/batch.js';
import { bogotaWindows, checkCounterpartyLimits, effectiveLimits, type LimitUsage } from '../domain/counterparty-limits.js';
import { normalizeDocument, sendAmlCandidates } from '../domain/names.js';
import { CAP_ERROR, RAIL_CAPS, type Rail } from '../domain/rails.js';
import { retryDelayMs, type ApprovalRecord, type ApprovalRef, type Destination, type FeeBreakdown, type TransferRecord } from '../domain/transfer.js';
import type { TransferDeps } from './deps.js';
import { protoRail, transferEvent } from './events.js';
import type { BatchStore, DispatchResult, ExecutionPick, ExecutionRefusal, OutboxEvent } from './ports.js';
import { amlAccountOf, checkDestination, directLookups, memoisedLookups, type DirectoryRefusal } from './send-transfer.js';
import { RESOLVE_MESSAGES, notFoundAsError } from './resolve-key.js';
import { IDEMPOTENCY_KEY, validateSend, type CompanyProfile, type SendCommand, type SendInput } from './send-input.js';
import { finishExpired, finishRejected, rejectReasonOf, requireSigningRole, signerOf } from './approvals.js';
import { reserveCommandOf, type TransferSaga } from './transfer-saga.js';
import { Problems, checkText, decodeTimeCursor, encodeTimeCursor, isUuid, orNull, requireCompany } from './validation.js';

export interface BatchDeps extends TransferDeps {
  batches: BatchStore;
  /** `awaitDispatch`: the request waits for its batch's dispatch instead of running it in the background (deterministic tests). */
  batchSettings: { dispatchConcurrency: number; lookupConcurrency: number; fundingLeaseMs: number; pollMs: number; awaitDispatch?: boolean };
}

export interface BatchItemInput {
  seq: number;
  line: number;
  send?: SendInput | undefined;
  invalidCode?: string | undefined;
  invalidMessage?: string | undefined;
}

export interface CreateBatchInput {
  reference?: string | undefined;
  description?: string | undefined;
  mode?: string | undefined;
  source?: string | undefined;
  requestHash?: string | undefined;
  idempotencyKey?: string | undefined;
  items: BatchItemInput[];
}

export interface ItemResult { seq: number; line: number | null; valid: boolean; errorCode: string | null; message: string | null }

export interface CreateBatchResult { batch: BatchSummary; results: ItemResult[]; replayed: boolean; keyReplayed: boolean }

export interface CallerOf { companyId?: string | undefined; apiKeyId?: string | undefined }

export const BATCH_SUBJECTS = { validated: 'transfer.batch_validated', completed: 'transfer.batch_completed' } as const;

export const BATCH_MESSAGES = {
  duplicateReference: (ref: string, first: number) => `La referencia "${ref}" se repite: ya la usa el ítem ${first} del lote.`,
  notExecutable: (state: string) => `El lote está en estado ${state} y no puede ejecutarse.`,
  notCancellable: (state: string) => `El lote está en estado ${state} y ya no puede cancelarse.`,
  expired: 'El lote expiró sin ejecutarse (24 horas después de validado).',
  noApproval: 'El lote no espera aprobación: solo un lote ejecutado de una empresa con múltiples firmas se firma.',
  approvalExpired: 'La aprobación del lote expiró sin alcanzar las firmas requeridas; los fondos de todos sus ítems fueron liberados.',
  rejected: (reason: string | null) => `El lote fue rechazado por un firmante; los fondos de todos sus ítems fueron liberados.${reason ? ` Motivo: ${reason}` : ''}`,
  fundingAbandoned: 'La reserva de fondos del lote no se completó; ejecútelo de nuevo.',
  nothingToExecute: 'Ningún ítem del lote pasó las verificaciones al ejecutarlo.',
};

/** Runs `fn` over `xs` with at most `n` at once, keeping the order of the results. */
export async function mapBounded<T, R>(xs: readonly T[], n: number, fn: (x: T, i: number) => Promise<R>): Promise<R[]> {
  const out = new Array<R>(xs.length);
  let next = 0;
  const worker = async () => {
    for (let i = next++; i < xs.length; i = next++) out[i] = await fn(xs[i]!, i);
  };
  await Promise.all(Array.from({ length: Math.min(n, xs.length) }, worker));
  return out;
}

const refusal = (err: unknown): { code: string; message: string } => {
  if (err instanceof AppError) {
    const fields = (err.details as { fields?: Array<{ path: string; message: string }> } | undefined)?.fields;
    return { code: err.code, message: fields?.length ? `${err.message} ${fields.map((f) => `${f.path}: ${f.message}`).join('; ')}` : err.message };
  }
  throw err;
};

/** What a batch line is screened on against the AML list: its document as written, its destination account's fingerprint. */
interface AmlSubject { document: string; account: string | null }

/**
 * One AML read for a company and its counterparties (the list may change between validation and
 * execution, so both ask): whether a line's send is refused. Each line is screened on exactly the
 * candidates a single send screens (`sendAmlCandidates`), from the document as the line wrote it and
 * its destination account (issue 36, finding 6).
 */
async function amlScreen(deps: BatchDeps, nit: string, subjects: Iterable<AmlSubject>): Promise<(s: AmlSubject) => boolean> {
  const candidates = new Set<string>();
  for (const c of subjects) for (const d of sendAmlCandidates(nit, c.document, c.account)) candidates.add(d);
  const hits = await deps.batches.amlHits([...candidates]);
  return (c) => sendAmlCandidates(nit, c.document, c.account).some((d) => hits.has(d));
}

/** An executable item's AML account: its ACH destination's fingerprint (as a single send's `amlAccountOf`). */
const itemAmlAccount = (it: BatchItemDraft): string | null => (it.destination?.kind === 'ACH' ? it.destinationFingerprint ?? null : null);

/** The limit keys of an item: its counterparty document and, when known, its destination fingerprint. */
const limitKeysOf = (d: BatchItemDraft): string[] => (d.destinationFingerprint ? [d.counterparty!, d.destinationFingerprint] : [d.counterparty!]);

/** The `transfer.batch_*` event of a batch (proto3 JSON), built from the batch as the statement leaves it. */
export function batchEvent(deps: TransferDeps, subject: string, summary: (b: BatchRecord) => BatchSummary): (b: BatchRecord) => OutboxEvent {
  const id = deps.newId();
  const occurredAt = deps.now();
  const traceparent = deps.traceparent();
  return (b) => ({
    id, subject,
    payload: transferEventsV1.BatchEvent.toJSON({ eventId: id, companyId: b.companyId, batch: batchToProto(summary(b)), occurredAt }),
    ...(traceparent ? { traceparent } : {}),
  });
}

/** A batch as the API and its events show it (proto). */
export function batchToProto(b: BatchSummary): transferV1.Batch {
  return {
    id: b.id, state: publicBatchState(b.state), mode: b.mode, source: b.source,
    ...(b.reference ? { reference: b.reference } : {}), ...(b.description ? { description: b.description } : {}),
    itemCount: b.itemCount, validCount: b.validCount, invalidCount: b.invalidCount,
    totals: b.totals.map((t) => ({ rail: protoRail(t.rail), count: t.count, amount: t.amount, totalFee: t.fee, ivaAmount: t.iva, total: t.total })),
    byStatus: b.byStatus.map((s) => ({ status: s.status, count: s.count, amount: s.amount })),
    finishedCount: b.finishedCount,
    createdAt: b.createdAt, expiresAt: b.expiresAt,
    ...(b.executedAt ? { executedAt: b.executedAt } : {}), ...(b.completedAt ? { completedAt: b.completedAt } : {}),
    ...(b.cancelledAt ? { cancelledAt: b.cancelledAt } : {}),
    threshold: b.approval?.threshold ?? 0,
    ...(b.approval ? { approvalId: b.approval.id, approval: batchApprovalToProto(b.approval) } : {}),
    ...(b.errorMessage ? { errorMessage: b.errorMessage } : {}),
  };
}

function batchApprovalToProto(a: ApprovalRecord): transferV1.BatchApproval {
  return {
    approvalId: a.id, threshold: a.threshold, status: a.status,
    signatures: a.signatures.map((x) => ({ userId: x.userId, email: x.email, role: x.role, signedAt: x.signedAt })),
    createdAt: a.createdAt, expiresAt: a.expiresAt,
    ...(a.decidedAt ? { decidedAt: a.decidedAt } : {}), ...(a.rejectReason ? { rejectReason: a.rejectReason } : {}),
    ...(a.rejectedBy ? { rejectedBy: a.rejectedBy } : {}),
  };
}

/**
 * POST /transfers/batches: validation first, no money moved. Every item gets every check a send
 * gets, in the contract's order (schema → caps → TARGET_DOCUMENT_REQUIRED → AML → key / bank account
 * → counterparty limits, aggregated with the batch's own earlier items), with the reads batched: one
 * AML query for the whole batch, one directory lookup per distinct key and one account validation per
 * distinct account (bounded concurrency), one fee computation per rail. The batch is stored VALIDATED
 * (or REJECTED: an invalid item in mode ALL, or none valid) with its `transfer.batch_validated` event.
 */
export class CreateBatch {
  constructor(private readonly deps: BatchDeps) {}

  async execute(caller: CallerOf, company: CompanyProfile, input: CreateBatchInput): Promise<CreateBatchResult> {
    const companyId = requireCompany(caller.companyId);
    const { deps } = this;
    const p = new Problems();
    const reference = orNull(input.reference);
    const description = orNull(input.description);
    checkText(p, 'reference', reference, { max: 100 });
    checkText(p, 'description', description, { max: 255 });
    const mode = (orNull(input.mode) ?? 'ALL').toUpperCase() as BatchMode;
    if (mode !== 'ALL' && mode !== 'VALID_ONLY') p.add('mode', 'must be ALL or VALID_ONLY');
    const source = (orNull(input.source) ?? 'JSON').toUpperCase() as BatchSource;
    if (source !== 'JSON' && source !== 'CSV') p.add('source', 'must be JSON or CSV');
    const idempotencyKey = orNull(input.idempotencyKey);
    if (idempotencyKey !== null && !IDEMPOTENCY_KEY.test(idempotencyKey)) p.add('idempotencyKey', 'must be 1 to 255 visible ASCII characters');
    if (input.items.length === 0) p.add('items', 'must hold at least one item');
    input.items.forEach((it, i) => { if (it.seq !== i + 1) p.add(`items.${i}.seq`, `must be ${i + 1}`); });
    p.throwIfAny();
    if (input.items.length > MAX_BATCH_ITEMS) {
      throw new AppError('VALIDATION_ERROR', `El lote tiene ${input.items.length} transferencias; el máximo es ${MAX_BATCH_ITEMS.toLocaleString('es-CO')}.`,
        { fields: [{ path: 'items', message: `at most ${MAX_BATCH_ITEMS}` }] });
    }
    checkDuplicateReferences(input.items);
    const requestHash = orNull(input.requestHash) ?? `svc:${deps.newId()}`;

    const replay = await this.replayed(companyId, requestHash, idempotencyKey, reference);
    if (replay) return replay;

    const drafts = await validateItems(deps, companyId, company, input.items);
    const validCount = drafts.filter((d) => d.status === 'VALID').length;
    const invalidCount = drafts.length - validCount;
    const state: BatchState = validCount === 0 || (mode === 'ALL' && invalidCount > 0) ? 'REJECTED' : 'VALIDATED';
    const now = deps.now();
    const batch: BatchRecord = {
      id: deps.newId(), companyId, apiKeyId: caller.apiKeyId ?? null, state, reference, description, mode, source,
      itemCount: drafts.length, validCount, invalidCount, ivaApplicable: company.ivaApplicable,
      createdAt: now, expiresAt: new Date(now.getTime() + BATCH_TTL_MS), executedAt: null, completedAt: null, cancelledAt: null, errorMessage: null,
    };
    const summary = summaryOfDrafts(batch, drafts);
    const event = batchEvent(deps, BATCH_SUBJECTS.validated, () => summary)(batch);
    const outcome = await deps.batches.insert(batch, requestHash, idempotencyKey, drafts, event);
    if (outcome !== 'OK') {
      // A concurrent twin stored its batch first: it is the answer (or a conflict).
      const again = await this.replayed(companyId, requestHash, idempotencyKey, reference);
      if (again) return again;
      throw new AppError('INTERNAL_ERROR');
    }
    deps.eventsWritten();
    deps.log.info({ batchId: batch.id, companyId, items: drafts.length, valid: validCount, state }, 'batch validated');
    return { batch: summary, results: drafts.map(resultOf), replayed: false, keyReplayed: false };
  }

  private async replayed(companyId: string, requestHash: string, key: string | null, reference: string | null): Promise<CreateBatchResult | undefined> {
    const { batches } = this.deps;
    let found = key ? await batches.findByIdempotencyKey(companyId, key, requestHash) : undefined;
    if (found && !found.sameRequest) throw new AppError('IDEMPOTENCY_KEY_REUSED');
    const byKey = found !== undefined;
    if (!found && reference) {
      found = await batches.findByReference(companyId, reference, requestHash);
      if (found && !found.sameRequest) throw new AppError('REFERENCE_CONFLICT', 'Ya existe un lote con esa referencia y otro contenido.');
    }
    if (!found) return undefined;
    const [summary] = await batches.summaries([found.batch]);
    const items = await allItems(batches, found.batch.id);
    return { batch: summary!, results: items.map(resultOf), replayed: true, keyReplayed: byKey };
  }
}

function checkDuplicateReferences(items: BatchItemInput[]): void {
  const seen = new Map<string, number>();
  const fields: Array<{ path: string; message: string }> = [];
  for (const it of items) {
    const ref = orNull(it.send?.reference ?? null);
    if (!ref) continue;
    const first = seen.get(ref);
    if (first === undefined) seen.set(ref, it.seq);
    else fields.push({ path: it.line > 0 ? `line ${it.line}` : `items.${it.seq - 1}.reference`, message: BATCH_MESSAGES.duplicateReference(ref, first) });
  }
  if (fields.length > 0) {
    throw new AppError('VALIDATION_ERROR', `Hay referencias repetidas dentro del lote (${fields.length}); cada ítem debe tener una referencia única.`, { fields: fields.slice(0, 100) });
  }
}

async function allItems(batches: BatchStore, batchId: string): Promise<BatchItemRecord[]> {
  const out: BatchItemRecord[] = [];
  for (let after = 0; ;) {
    const page = await batches.items(batchId, null, after, 5_000);
    out.push(...page);
    if (page.length < 5_000) return out;
    after = page[page.length - 1]!.seq;
  }
}

function resultOf(d: { seq: number; line: number | null; status: string; errorCode: string | null; errorMessage: string | null }): ItemResult {
  const valid = d.status !== 'INVALID';
  return { seq: d.seq, line: d.line, valid, errorCode: valid ? null : d.errorCode, message: valid ? null : d.errorMessage };
}

/** A just-validated batch's summary (no read back). */
function summaryOfDrafts(b: BatchRecord, drafts: BatchItemDraft[]): BatchSummary {
  const totals = new Map<Rail, { rail: Rail; count: number; amount: bigint; fee: bigint; iva: bigint; total: bigint }>();
  let validAmount = 0n;
  let invalidAmount = 0n;
  for (const d of drafts) {
    if (d.status !== 'VALID' || !d.rail || !d.fee) { invalidAmount += d.amount; continue; }
    validAmount += d.amount;
    const t = totals.get(d.rail) ?? { rail: d.rail, count: 0, amount: 0n, fee: 0n, iva: 0n, total: 0n };
    t.count += 1; t.amount += d.amount; t.fee += d.fee.subtotalFee; t.iva += d.fee.ivaAmount; t.total += d.amount + d.fee.subtotalFee + d.fee.ivaAmount;
    totals.set(d.rail, t);
  }
  const byStatus: BatchSummary['byStatus'] = [];
  if (b.invalidCount > 0) byStatus.push({ status: 'INVALID', count: b.invalidCount, amount: invalidAmount });
  if (b.validCount > 0) byStatus.push({ status: 'VALID', count: b.validCount, amount: validAmount });
  return { ...b, approval: null, totals: [...totals.values()].sort((x, y) => x.rail.localeCompare(y.rail)), byStatus, finishedCount: b.invalidCount };
}

interface Candidate { seq: number; line: number | null; cmd: SendCommand; counterparty: string; account: string | null }

/**
 * A batch line's directory verdict (docs/batches.md): a well-formed key the directory does not know is
 * KEY_NOT_FOUND, as the line's result says (INVALID_KEY stays for a malformed key). A single send
 * answers it INVALID_KEY over HTTP (KEY_NOT_FOUND is a 404 there); a line's code is no HTTP status.
 */
const batchLineRefusal: DirectoryRefusal = (code) => (code === 'KEY_NOT_FOUND' ? new AppError('KEY_NOT_FOUND', RESOLVE_MESSAGES.KEY_NOT_FOUND) : notFoundAsError(code));

/** Every check of a send for every item, reads batched. Items in order; throws only for a whole-batch failure (a provider down). */
async function validateItems(deps: BatchDeps, companyId: string, company: CompanyProfile, items: BatchItemInput[]): Promise<BatchItemDraft[]> {
  const drafts: BatchItemDraft[] = items.map((it) => ({
    seq: it.seq, line: it.line > 0 ? it.line : null, status: 'VALID', rail: null, amount: it.send?.amount ?? 0n, fee: null,
    targetName: orNull(it.send?.targetName ?? null) ?? '', targetDocument: orNull(it.send?.targetDocument ?? null) ?? '', counterparty: null,
    reference: orNull(it.send?.reference ?? null), description: orNull(it.send?.description ?? null), destination: null, errorCode: null, errorMessage: null,
  }));
  const invalid = (i: number, e: { code: string; message: string }) => {
    const d = drafts[i]!;
    d.status = 'INVALID'; d.errorCode = e.code; d.errorMessage = e.message; d.fee = null;
  };
  // 0. schema, 1. caps, 2. TARGET_DOCUMENT_REQUIRED
  const live: Candidate[] = [];
  items.forEach((it, i) => {
    if (it.invalidCode || !it.send) return invalid(i, { code: it.invalidCode || 'INVALID_REQUEST', message: it.invalidMessage || 'El ítem no es válido.' });
    try {
      const cmd = validateSend({ ...it.send, company, idempotencyKey: undefined, requestHash: 'batch-item' });
      drafts[i]!.rail = cmd.rail;
      if (cmd.amount > RAIL_CAPS[cmd.rail]) throw new AppError(CAP_ERROR[cmd.rail]);
      if (cmd.rail === 'BREB' && !cmd.targetDocument) throw new AppError('TARGET_DOCUMENT_REQUIRED');
      const counterparty = cmd.destination.kind === 'ACH' ? cmd.destination.documentNumber : cmd.targetDocument!;
      live.push({ seq: it.seq, line: drafts[i]!.line, cmd, counterparty, account: amlAccountOf(deps, cmd) });
    } catch (err) {
      invalid(i, refusal(err));
    }
  });
  // 3. AML: one query for the company, every counterparty and every destination account
  const listed = await amlScreen(deps, company.nit, live.map((c) => ({ document: c.counterparty, account: c.account })));
  const afterAml = live.filter((c) => {
    if (!listed({ document: c.counterparty, account: c.account })) return true;
    invalid(c.seq - 1, refusal(new AppError('RECIPIENT_BLACKLISTED')));
    return false;
  });
  // 4. destinations: one directory lookup per distinct key, one validation per distinct account
  const lookups = memoisedLookups(directLookups(deps, companyId));
  const settled = await mapBounded(afterAml, deps.batchSettings.lookupConcurrency, async (c) => {
    try {
      return { c, destination: await checkDestination(c.cmd, lookups, batchLineRefusal) };
    } catch (err) {
      if (err instanceof AppError && (err.code === 'BREB_DIRECTORY_LOOKUP_FAILED' || err.code === 'ACH_RAIL_UNAVAILABLE' || err.code === 'SERVICE_UNAVAILABLE')) throw err;
      invalid(c.seq - 1, refusal(err));
      return undefined;
    }
  });
  const checked = settled.filter((x): x is { c: Candidate; destination: { destination: Destination; targetName: string } } => x !== undefined);
  // fees: one computation per rail
  for (const rail of ['BREB', 'ACH'] as const) {
    const mine = checked.filter((x) => x.c.cmd.rail === rail);
    const fees = await deps.ledger.computeFeesBatch(companyId, rail, mine.map((x) => x.c.cmd.amount), company.ivaApplicable);
    mine.forEach((x, k) => {
      const d = drafts[x.c.seq - 1]!;
      d.fee = fees[k]!;
      d.destination = x.destination.destination;
      d.targetName = x.destination.targetName;
      d.targetDocument = x.c.cmd.destination.kind === 'ACH' ? x.c.cmd.destination.documentNumber : x.c.cmd.targetDocument!;
      d.counterparty = normalizeDocument(x.c.counterparty);
      d.destinationFingerprint = deps.destinationFingerprint(x.destination.destination);
    });
  }
  // 5. counterparty limits: today's usage of every counterparty document and destination at once, plus
  // the batch's own earlier items
  const limited = checked.map((x) => drafts[x.c.seq - 1]!).filter((d) => d.status === 'VALID');
  const verdicts = limitVerdicts(deps, company, limited, await deps.batches.limitUsage(companyId, [...new Set(limited.flatMap(limitKeysOf))], bogotaWindows(deps.now())));
  for (const [seq, code] of verdicts) invalid(seq - 1, refusal(new AppError(code as 'COUNTERPARTY_DAILY_LIMIT_EXCEEDED')));
  return drafts;
}

/**
 * Items (in order) that the limits refuse, counting each accepted item towards the next ones. An item
 * must fit within the limits both for its counterparty document and for its destination (the larger
 * usage decides, as `locked_destination_usage` does for a single send).
 */
function limitVerdicts(deps: TransferDeps, company: CompanyProfile, items: BatchItemDraft[], usage: Map<string, LimitUsage>): Map<number, string> {
  const limits = effectiveLimits(
    { daily: company.counterpartyDailyLimitCents, monthly: company.counterpartyMonthlyLimitCents },
    { daily: deps.settings.counterpartyDailyLimit, monthly: deps.settings.counterpartyMonthlyLimit },
  );
  const running = new Map<string, LimitUsage>();
  const out = new Map<number, string>();
  const max = (a: bigint, b: bigint) => (a > b ? a : b);
  for (const d of items) {
    const keys = limitKeysOf(d);
    const usages = keys.map((k) => running.get(k) ?? usage.get(k) ?? { daySum: 0n, monthSum: 0n });
    const u = usages.reduce((a, b) => ({ daySum: max(a.daySum, b.daySum), monthSum: max(a.monthSum, b.monthSum) }));
    const verdict = checkCounterpartyLimits(d.amount, u, limits);
    if (verdict !== 'OK') { out.set(d.seq, verdict); continue; }
    keys.forEach((k, i) => running.set(k, { daySum: usages[i]!.daySum + d.amount, monthSum: usages[i]!.monthSum + d.amount }));
  }
  return out;
}

// ───────────────────────────── reads ─────────────────────────────

/** The states a batch shows (FUNDING reads as EXECUTING). */
const STATES: readonly string[] = BATCH_STATES.filter((st) => st !== 'FUNDING');
const ITEM_STATUSES: readonly string[] = ['VALID', 'INVALID', 'REJECTED', 'NOT_EXECUTED', 'PENDING', 'AWAITING_APPROVAL', 'EXECUTING', 'COMPLETED', 'FAILED', 'EXPIRED'];

async function ownBatch(deps: BatchDeps, caller: string | undefined, id: string): Promise<BatchRecord> {
  const companyId = requireCompany(caller);
  if (!isUuid(id)) throw new AppError('BATCH_NOT_FOUND');
  const b = await deps.batches.get(companyId, id.toLowerCase());
  if (!b) throw new AppError('BATCH_NOT_FOUND');
  return b;
}

export class BatchQueries {
  constructor(private readonly deps: BatchDeps) {}

  async get(caller: string | undefined, id: string): Promise<BatchSummary> {
    const b = await ownBatch(this.deps, caller, id);
    return (await this.deps.batches.summaries([b]))[0]!;
  }

  async list(caller: string | undefined, q: { state?: string | undefined; limit?: number; cursor?: string | undefined }): Promise<{ items: BatchSummary[]; nextCursor: string | null }> {
    const companyId = requireCompany(caller);
    const p = new Problems();
    const state = orNull(q.state ?? null)?.toUpperCase() ?? null;
    if (state && !STATES.includes(state)) p.add('status', `one of ${STATES.join(', ')}`);
    const limit = q.limit && q.limit > 0 ? q.limit : 50;
    if (limit > 100) p.add('limit', 'at most 100');
    const cursor = q.cursor ? decodeTimeCursor(p, q.cursor, isUuid) ?? null : null;
    p.throwIfAny();
    const rows = await this.deps.batches.list(companyId, state as BatchState | null, limit + 1, cursor);
    const page = rows.slice(0, limit);
    const last = page[page.length - 1];
    return {
      items: await this.deps.batches.summaries(page),
      nextCursor: rows.length > limit && last ? encodeTimeCursor(last) : null,
    };
  }

  async items(caller: string | undefined, q: { batchId: string; status?: string | undefined; limit?: number; cursor?: string | undefined }): Promise<{ items: BatchItemRecord[]; nextCursor: string | null }> {
    const b = await ownBatch(this.deps, caller, q.batchId);
    const p = new Problems();
    const status = orNull(q.status ?? null)?.toUpperCase() ?? null;
    if (status && !ITEM_STATUSES.includes(status)) p.add('status', `one of ${ITEM_STATUSES.join(', ')}`);
    const limit = q.limit && q.limit > 0 ? q.limit : 100;
    if (limit > 1000) p.add('limit', 'at most 1000');
    let after = 0;
    if (q.cursor) {
      after = Number(Buffer.from(q.cursor, 'base64url').toString('utf8'));
      if (!Number.isInteger(after) || after < 0) p.add('cursor', 'not a cursor returned by this listing');
    }
    p.throwIfAny();
    const rows = await this.deps.batches.items(b.id, status as ItemStatus | null, after, limit + 1);
    const page = rows.slice(0, limit);
    const last = page[page.length - 1];
    return { items: page, nextCursor: rows.length > limit && last ? Buffer.from(String(last.seq)).toString('base64url') : null };
  }

  /** Every item in order, in pages (results.csv). */
  async *stream(caller: string | undefined, batchId: string, pageSize = 1_000): AsyncGenerator<BatchItemRecord[]> {
    const b = await ownBatch(this.deps, caller, batchId);
    for (let after = 0; ;) {
      const page = await this.deps.batches.items(b.id, null, after, pageSize);
      if (page.length > 0) yield page;
      if (page.length < pageSize) return;
      after = page[page.length - 1]!.seq;
    }
  }
}

// ───────────────────────────── execution ─────────────────────────────

/**
 * Runs a batch's saga (domain/batch.ts): execute (re-checks, items recorded RECEIVED), fund (one
 * ReserveBatch), accept the items (RECEIVED → RESERVED through the send saga's `reserved` event, in
 * one statement), dispatch them (leased, bounded concurrency) and close the batch when every item is
 * final. Each step is safe to repeat; the batch sweeper resumes any of them.
 */
export class BatchRunner {
  constructor(private readonly deps: BatchDeps, private readonly saga: TransferSaga) {}

  /** POST /transfers/batches/{id}/execute. */
  async execute(caller: CallerOf, company: CompanyProfile, batchId: string): Promise<BatchSummary> {
    const { deps } = this;
    let b = await ownBatch(deps, caller.companyId, batchId);
    if (b.state === 'VALIDATED' && b.expiresAt.getTime() <= deps.now().getTime()) {
      await deps.batches.transition(b, 'expire', 'EXPIRED', { nextAttemptInMs: null }, null, 'not_executed');
      throw new AppError('INVALID_STATE_TRANSITION', BATCH_MESSAGES.expired);
    }
    if (b.state === 'REJECTED' || b.state === 'EXPIRED' || b.state === 'CANCELLED') {
      throw new AppError('INVALID_STATE_TRANSITION', BATCH_MESSAGES.notExecutable(b.state));
    }
    if (b.state !== 'VALIDATED') return (await deps.batches.summaries([b]))[0]!; // already executed: as it is now
    // A multi-signature company's batch waits for ONE approval of all its items (opened when the funds are reserved).
    const approval: ApprovalRef | null = company.multiSigThreshold >= 2
      ? { id: deps.newApprovalId(), threshold: company.multiSigThreshold, expiresAt: new Date(deps.now().getTime() + deps.settings.approvalTtlSeconds * 1000) }
      : null;

    const items = await deps.batches.executableItems(b.id);
    for (const it of items) it.destinationFingerprint = it.destination ? deps.destinationFingerprint(it.destination) : null;
    // The fee and IVA of the schedule in force now, at execution, as a single send sent now would pay
    // (validation showed an estimate: the schedule may have changed since). One computation per rail.
    const fees = await executionFees(deps, b, items);
    // AML again (the list may have changed since validation); limits again under the locks, in startExecution.
    // Screened on the document as the line wrote it (its `targetDocument`) and on its destination
    // account, as a single send is.
    const listed = await amlScreen(deps, company.nit, items.map((it) => ({ document: it.targetDocument, account: itemAmlAccount(it) })));
    const windows = bogotaWindows(deps.now());
    const started = await deps.batches.startExecution(b, [...new Set(items.flatMap(limitKeysOf))], windows, (usage) => {
      const refusals: ExecutionRefusal[] = [];
      const amlOk = items.filter((it) => {
        if (!listed({ document: it.targetDocument, account: itemAmlAccount(it) })) return true;
        refusals.push({ seq: it.seq, code: 'RECIPIENT_BLACKLISTED', message: new AppError('RECIPIENT_BLACKLISTED').message });
        return false;
      });
      const limited = limitVerdicts(deps, company, amlOk, usage);
      const picks: Array<ExecutionPick & { transfer: TransferRecord; counterparty: string }> = [];
      for (const it of amlOk) {
        const code = limited.get(it.seq);
        if (code) { refusals.push({ seq: it.seq, code, message: new AppError(code as 'COUNTERPARTY_DAILY_LIMIT_EXCEEDED').message }); continue; }
        const transfer = transferOf(deps, b, { ...it, fee: fees.get(it.seq)! }, approval);
        picks.push({ seq: it.seq, transferId: transfer.id, transfer, counterparty: it.counterparty! });
      }
      return { picks, refusals };
    }, deps.batchSettings.fundingLeaseMs, approval);
    if (!started) {
      // Another writer moved the batch first: another execute (answer the batch as it is), or a cancel
      // or the expiry, which this execute lost to: 409, as an execute of a cancelled or expired batch.
      const now = (await deps.batches.get(b.companyId, b.id)) ?? b;
      if (now.state === 'VALIDATED' && now.expiresAt.getTime() <= deps.now().getTime()) {
        await deps.batches.transition(now, 'expire', 'EXPIRED', { nextAttemptInMs: null }, null, 'not_executed');
        throw new AppError('INVALID_STATE_TRANSITION', BATCH_MESSAGES.expired);
      }
      if (now.state === 'REJECTED' || now.state === 'EXPIRED' || now.state === 'CANCELLED') {
        throw new AppError('INVALID_STATE_TRANSITION', BATCH_MESSAGES.notExecutable(now.state));
      }
      return (await deps.batches.summaries([now]))[0]!;
    }
    deps.log.info({ batchId: b.id, items: started.picks.length, refused: started.refusals.length }, 'batch executing: items recorded');
    b = { ...b, state: 'FUNDING' };
    b = await this.fund(b, true);
    return (await deps.batches.summaries([b]))[0]!;
  }

  /**
   * FUNDING → one ReserveBatch of the executed items (rebuilt the same from their transfers every
   * time: a replay) → items RESERVED and the batch EXECUTING; a definite refusal → items REJECTED,
   * batch VALIDATED again (the error is thrown to the request); an unknown outcome → left FUNDING for the sweeper.
   */
  async fund(b: BatchRecord, throwRefusal: boolean, refenced = false): Promise<BatchRecord> {
    const { deps } = this;
    const transfers = await deps.batches.executedTransfers(b.id);
    if (transfers.length === 0) {
      const [summary] = await deps.batches.summaries([b]);
      const done = await deps.batches.transition(b, 'nothing_to_fund', 'FAILED', { completed: true, nextAttemptInMs: null, errorMessage: BATCH_MESSAGES.nothingToExecute },
        batchEvent(deps, BATCH_SUBJECTS.completed, (x) => ({ ...summary!, ...x })));
      if (done) deps.eventsWritten();
      return done ?? b;
    }
    let holdIds: string[];
    try {
      holdIds = (await deps.ledger.reserveBatch(b.companyId, transfers.map((t) => reserveCommandOf(t)))).holdIds;
    } catch (err) {
      if (!(err instanceof AppError) || err.code === 'SERVICE_UNAVAILABLE' || err.code === 'INTERNAL_ERROR') {
        deps.log.warn({ batchId: b.id, err: (err as Error).message }, 'batch reserve outcome unknown; the batch sweeper retries');
        if (throwRefusal) return b;
        throw err;
      }
      // A definite refusal (balance, wallet) — or RESERVE_VOIDED: an earlier refusal fenced this batch.
      // Fence first: void the first item's key, so a ReserveBatch still in flight (a lost reply, a
      // twin of a stalled replica) can never land after we give up (ReserveBatch is all or nothing and
      // refuses a voided key). If it had already landed, the batch is funded after all: replay it.
      const first = transfers[0]!;
      const fence = await deps.ledger.voidReserve(b.companyId, first.id, first.rail, first.fee.ivaApplicable);
      if (!fence.voided) {
        if (refenced) throw new AppError('INTERNAL_ERROR', undefined, { reason: 'batch reserve both landed and refused' });
        deps.log.warn({ batchId: b.id, code: err.code }, 'batch reserve refused here but landed meanwhile (a twin): replaying it');
        return this.fund(b, throwRefusal, true);
      }
      const code = err.code === 'RESERVE_VOIDED' ? 'SERVICE_UNAVAILABLE' : err.code;
      await this.saga.applyBulk('reserve_refused', 'batch', (move) => deps.batches.transitionTransfers(b.id, move,
        transfers.map((t) => ({ id: t.id, holdId: null, rejectCode: code, event: null })), false, 'bulk payout reserve refused'));
      const message = err.code === 'RESERVE_VOIDED' ? BATCH_MESSAGES.fundingAbandoned : err.message;
      const back = await deps.batches.transition(b, 'funding_refused', 'VALIDATED',
        { errorMessage: message, nextAttemptInMs: Math.max(0, b.expiresAt.getTime() - deps.now().getTime()), executionOf: first.id }, null, 'back_to_valid');
      deps.log.warn({ batchId: b.id, code: err.code }, 'batch reserve refused; the batch is VALIDATED again');
      if (throwRefusal && err.code !== 'RESERVE_VOIDED') throw err;
      return back ?? (await deps.batches.get(b.companyId, b.id)) ?? b;
    }
    const approval = transfers[0]!.approval;
    if (approval) return this.awaitApproval(b, transfers, holdIds, approval);
    // Accepted for dispatch now: the bulk `reserved` starts each line's dispatch clock.
    await this.saga.applyBulk('reserved', 'batch', (move) => {
      const accepted = transfers.map((t, k) => ({ ...t, state: move.to, holdId: holdIds[k]! }));
      return deps.batches.transitionTransfers(b.id, move,
        accepted.map((t) => ({ id: t.id, holdId: t.holdId, rejectCode: null, event: transferEvent(deps, 'created')(t) })), true, 'bulk payout reserved');
    });
    const next = await deps.batches.transition(b, 'funded', 'EXECUTING', { nextAttemptInMs: deps.batchSettings.pollMs, executionOf: transfers[0]!.id }, null);
    deps.log.info({ batchId: b.id, items: transfers.length }, 'batch funded: items accepted');
    const now = next ?? (await deps.batches.get(b.companyId, b.id)) ?? b;
    if (now.state === 'EXECUTING') {
      const dispatching = this.dispatch(now).catch((e: unknown) => deps.log.warn({ batchId: b.id, err: (e as Error).message }, 'batch dispatch stopped; the sweepers resume it'));
      if (deps.batchSettings.awaitDispatch) await dispatching;
    }
    return now;
  }

  /**
   * The funds of a multi-signature company's batch are reserved: FUNDING → AWAITING_APPROVAL, its one
   * approval opened and every item RECEIVED → AWAITING_APPROVAL (the send saga's `awaiting_approval`,
   * with its event), in one transaction. Signers decide in the dashboard; the batch sweeper settles it
   * at the deadline.
   */
  private async awaitApproval(b: BatchRecord, transfers: TransferRecord[], holdIds: string[], approval: ApprovalRef): Promise<BatchRecord> {
    const { deps } = this;
    // The items' own sweeper looks after the batch's (which settles them all at once): a backstop.
    const next = await this.saga.applyBulk('awaiting_approval', 'batch', (move) => {
      const moves = transfers.map((t, k) => {
        const accepted = { ...t, state: move.to, holdId: holdIds[k]! };
        return { id: t.id, holdId: accepted.holdId, rejectCode: null, event: transferEvent(deps, 'awaiting_approval')(accepted) };
      });
      return deps.batches.awaitApproval(b, approval, transfers[0]!.id, move, moves, 60_000);
    });
    if (next) {
      deps.log.info({ batchId: b.id, items: transfers.length, approvalId: approval.id, threshold: approval.threshold }, 'batch funded: awaiting approval');
    }
    return next ?? (await deps.batches.get(b.companyId, b.id)) ?? b;
  }

  /**
   * A multi-signature batch whose approval was decided without quorum (rejected) or ran out of time
   * (expired): each item still awaiting it is released the single send's way (the send saga's `reject`
   * / `expire`: the transition is won first, then the hold released), with bounded concurrency, then
   * the batch closes FAILED / EXPIRED. Safe to repeat: the sweepers resume it.
   */
  async settleApproval(b: BatchRecord, a: ApprovalRecord): Promise<BatchRecord> {
    const { deps } = this;
    if (a.status !== 'REJECTED' && a.status !== 'EXPIRED') return b;
    const live = (await deps.batches.executedTransfers(b.id)).filter((t) => ['AWAITING_APPROVAL', 'RELEASING', 'EXPIRING'].includes(t.state));
    await mapBounded(live, deps.batchSettings.dispatchConcurrency, (t) => (a.status === 'REJECTED'
      ? finishRejected(this.saga, t, a.rejectReason, a.rejectedBy, 'batch')
      : finishExpired(this.saga, t, 'batch')).catch((err: unknown) =>
      deps.log.warn({ transferId: t.id, batchId: b.id, err: (err as Error).message }, 'batch item not released yet; the sweepers retry')));
    return this.finishIfDone(b, a.status === 'REJECTED' ? BATCH_MESSAGES.rejected(a.rejectReason) : BATCH_MESSAGES.approvalExpired);
  }

  /**
   * Dispatches the batch's accepted items, leased in pages of 200, then checks whether it is finished.
   * Per page: the dispatch attempts are counted in one statement (before the rail is called, as a
   * send's are), the rail is called with bounded concurrency, and the items the rail took move
   * RESERVED → DISPATCHED through the send saga's `dispatched` event in one statement. A refusal or an
   * unavailable rail takes the single send's way (release, or a retry scheduled). Approved (EXECUTING)
   * items of a multi-signature batch go the same way, the ledger showing them EXECUTING first and
   * PENDING once dispatched (one call per page each).
   */
  async dispatch(b: BatchRecord): Promise<void> {
    const { deps } = this;
    const leaseMs = Math.max(30_000, deps.settings.sweeperGraceSeconds * 1000);
    for (;;) {
      const page = await deps.batches.leaseDispatchable(b.id, 200, leaseMs);
      if (page.length === 0) break;
      const warn = (t: TransferRecord) => (err: unknown) => {
        deps.log.warn({ transferId: t.id, batchId: b.id, err: (err as Error).message }, 'batch item not dispatched yet; the sweeper retries');
        return t;
      };
      // Approved items: the ledger shows them EXECUTING before the rail is called (a commit is refused
      // from AWAITING_APPROVAL), all of the page in one call; if it cannot, they wait for the next look.
      const approved = page.filter((t) => t.state === 'EXECUTING');
      const shown = approved.length === 0 ? true
        : await deps.ledger.setMovementStatuses(b.companyId, approved.map((t) => t.id), 'EXECUTING', 'AWAITING_APPROVAL').then(() => true, (err: unknown) => {
          deps.log.warn({ batchId: b.id, err: (err as Error).message }, 'approved batch items not shown EXECUTING yet; the sweepers retry');
          return false;
        });
      const reserved = page.filter((t) => t.state === 'RESERVED' || (shown && t.state === 'EXECUTING'));
      const counted = await deps.batches.recordDispatchIntents(reserved.map((t) => t.id));
      const sent = await mapBounded(reserved.filter((t) => counted.has(t.id)), deps.batchSettings.dispatchConcurrency, async (t) => ({
        t, res: await deps.rails.dispatch(t, this.saga.callbackUrl(t)).catch((err: unknown): DispatchResult => ({ outcome: 'unavailable', ambiguous: true, error: (err as Error).message })),
      }));
      const now = deps.now();
      const accepted = sent.filter((x): x is { t: TransferRecord; res: Extract<DispatchResult, { outcome: 'accepted' }> } => x.res.outcome === 'accepted');
      if (accepted.length > 0) {
        await this.saga.applyBulk('dispatched', 'batch', (move) => deps.batches.markDispatched(b.id, move, accepted.map(({ t, res }) => ({
          id: t.id, providerTransferId: res.providerTransferId,
          event: transferEvent(deps, 'dispatched')({ ...t, state: move.to, providerTransferId: res.providerTransferId || t.providerTransferId, dispatchedAt: now }),
        })), deps.settings.confirmTimeoutSeconds * 1000));
      }
      // The listing shows the approved ones PENDING from here (a commit that outran this leaves COMPLETED as it is).
      const approvedSent = accepted.filter(({ t }) => t.state === 'EXECUTING').map(({ t }) => t.id);
      if (approvedSent.length > 0) {
        await deps.ledger.setMovementStatuses(b.companyId, approvedSent, 'PENDING', 'EXECUTING').catch((err: unknown) =>
          deps.log.warn({ batchId: b.id, err: (err as Error).message }, 'could not show approved batch items as PENDING in the ledger'));
      }
      // The rare ones, one by one as a single send's: refused → released; unavailable → retried by the sweeper.
      for (const { t, res } of sent) {
        if (res.outcome === 'rejected') {
          const won = await this.saga.apply({ ...t, dispatchAttempts: t.dispatchAttempts + 1 }, 'dispatch_refused', 'batch', { errorMessage: res.message, reason: 'rail rejected at dispatch' }).catch(warn(t));
          if (won?.state === 'RELEASING') await this.saga.settle(won, 'batch').catch(warn(t));
        } else if (res.outcome === 'unavailable') {
          const delay = retryDelayMs(t.dispatchAttempts + 1, deps.settings.dispatchRetryBaseMs, deps.settings.dispatchRetryMaxMs);
          await deps.store.recordDispatchAttempt(t.id, delay, res.ambiguous, res.error).catch(warn(t));
        }
      }
    }
    await this.finishIfDone(b);
  }

  /**
   * EXECUTING (or AWAITING_APPROVAL after a rejection or the deadline) with every item final →
   * COMPLETED / PARTIALLY_FAILED / FAILED / EXPIRED, with `transfer.batch_completed`.
   */
  async finishIfDone(b: BatchRecord, errorMessage?: string): Promise<BatchRecord> {
    const { deps } = this;
    if ((await deps.batches.liveItems(b.id)) > 0) return b;
    const [summary] = await deps.batches.summaries([b]);
    const to = finalBatchState(summary!.byStatus);
    const done = await deps.batches.transition(b, 'finished', to, { completed: true, nextAttemptInMs: null, ...(errorMessage ? { errorMessage } : {}) },
      batchEvent(deps, BATCH_SUBJECTS.completed, (x) => ({ ...summary!, ...x })));
    if (done) {
      deps.eventsWritten();
      deps.log.info({ batchId: b.id, state: to }, 'batch finished');
    }
    return done ?? b;
  }

  /**
   * POST /dashboard/batches/{id}/sign (CONTRACT §5 for a whole batch). The gateway has checked the
   * session and the TOTP code; the role, the approval's state and the signer's uniqueness are decided
   * under the approval's row lock. The signature that reaches the threshold moves the batch and every
   * item to EXECUTING in that same transaction, then the items are dispatched (the batch sweeper
   * resumes the dispatch should this process stop).
   */
  async sign(caller: string | undefined, input: { batchId: string; signer?: { userId?: string; email?: string; role?: string }; precheck?: boolean }): Promise<BatchSummary> {
    const { deps } = this;
    const companyId = requireCompany(caller);
    const signer = signerOf(input.signer);
    requireSigningRole(signer);
    if (!isUuid(input.batchId)) throw new AppError('BATCH_NOT_FOUND');
    // The signature that reaches quorum moves every item AWAITING_APPROVAL → EXECUTING in bulk (the table's `quorum`).
    const outcome = await this.saga.applyBulk('quorum', 'approval', (quorum) => deps.batches.signApproval(companyId, input.batchId, signer, quorum,
      (t, emails) => transferEvent(deps, 'approved', { approvedBy: emails })(t), deps.batchSettings.pollMs, input.precheck === true));
    this.decisionRefusal(outcome.kind);
    const b = (await deps.batches.get(companyId, input.batchId))!;
    if (outcome.kind === 'signed') {
      deps.log.info({ batchId: b.id, userId: signer.userId, quorum: outcome.quorum }, 'batch approval signed');
      if (outcome.quorum) {
        const dispatching = this.dispatch(b).catch((e: unknown) => deps.log.warn({ batchId: b.id, err: (e as Error).message }, 'approved batch not dispatched yet; the sweepers resume it'));
        if (deps.batchSettings.awaitDispatch) await dispatching;
      }
    }
    return (await deps.batches.summaries([(await deps.batches.get(companyId, b.id)) ?? b]))[0]!;
  }

  /** POST /dashboard/batches/{id}/reject: the approval REJECTED, then every item FAILED with its funds released, the batch FAILED. */
  async reject(caller: string | undefined, input: { batchId: string; signer?: { userId?: string; email?: string; role?: string }; reason?: string | undefined }): Promise<BatchSummary> {
    const { deps } = this;
    const companyId = requireCompany(caller);
    const signer = signerOf(input.signer);
    requireSigningRole(signer);
    const reason = rejectReasonOf(input.reason);
    if (!isUuid(input.batchId)) throw new AppError('BATCH_NOT_FOUND');
    const outcome = await deps.batches.rejectApproval(companyId, input.batchId, signer, reason, deps.settings.sweeperGraceSeconds * 1000);
    this.decisionRefusal(outcome.kind);
    const b = (await deps.batches.get(companyId, input.batchId))!;
    deps.log.info({ batchId: b.id, userId: signer.userId }, 'batch approval rejected');
    const approval = (await deps.batches.summaries([b]))[0]!.approval!;
    // The answer shows the batch after the rejection: its items released and the batch FAILED (the
    // releases run here, bounded; one the ledger cannot take now is left to the sweepers, and the
    // batch then still shows AWAITING_APPROVAL with its approval REJECTED until they finish).
    await this.settleApproval(b, approval).catch((e: unknown) => deps.log.warn({ batchId: b.id, err: (e as Error).message }, 'rejected batch not released yet; the sweepers finish it'));
    return (await deps.batches.summaries([(await deps.batches.get(companyId, b.id)) ?? b]))[0]!;
  }

  /** The answer to a decision on a batch's approval that could not be taken. */
  private decisionRefusal(kind: string): void {
    switch (kind) {
      case 'not_found': throw new AppError('BATCH_NOT_FOUND');
      case 'no_approval': throw new AppError('APPROVAL_NOT_PENDING', BATCH_MESSAGES.noApproval);
      case 'expired':
        this.deps.eventsWritten();
        throw new AppError('APPROVAL_EXPIRED');
      case 'already_signed': throw new AppError('ALREADY_SIGNED');
      case 'not_pending': throw new AppError('APPROVAL_NOT_PENDING');
      default:
    }
  }

  /** POST /transfers/batches/{id}/cancel: VALIDATED → CANCELLED (a cancelled batch answers as it is). */
  async cancel(caller: CallerOf, batchId: string): Promise<BatchSummary> {
    const { deps } = this;
    const b = await ownBatch(deps, caller.companyId, batchId);
    if (b.state !== 'CANCELLED') {
      const next = await deps.batches.transition(b, 'cancel', 'CANCELLED', { cancelled: true, nextAttemptInMs: null }, null, 'not_executed');
      if (!next) throw new AppError('INVALID_STATE_TRANSITION', BATCH_MESSAGES.notCancellable(publicBatchState((await deps.batches.get(b.companyId, b.id))?.state ?? b.state)));
      deps.log.info({ batchId: b.id }, 'batch cancelled');
      return (await deps.batches.summaries([next]))[0]!;
    }
    return (await deps.batches.summaries([b]))[0]!;
  }

  /** The batch sweeper's work on one leased batch. */
  async resume(b: BatchRecord): Promise<void> {
    const { deps } = this;
    switch (b.state) {
      case 'VALIDATED':
        if (b.expiresAt.getTime() <= deps.now().getTime()) {
          await deps.batches.transition(b, 'expire', 'EXPIRED', { nextAttemptInMs: null }, null, 'not_executed');
          deps.log.info({ batchId: b.id }, 'batch expired (not executed within 24 h)');
        } else await deps.batches.reschedule(b.id, 'VALIDATED', b.expiresAt.getTime() - deps.now().getTime());
        return;
      case 'FUNDING':
        await this.fund(b, false);
        return;
      case 'AWAITING_APPROVAL': {
        const a = await deps.batches.expireApprovalIfDue(b.id);
        if (!a) throw new Error(`batch ${b.id} awaits an approval it does not have`);
        if (a.status === 'PENDING') await deps.batches.reschedule(b.id, 'AWAITING_APPROVAL', Math.max(0, a.expiresAt.getTime() - deps.now().getTime()) + 50);
        else if ((await this.settleApproval(b, a)).state === 'AWAITING_APPROVAL') await deps.batches.reschedule(b.id, 'AWAITING_APPROVAL', deps.batchSettings.pollMs);
        return;
      }
      case 'EXECUTING': {
        await this.dispatch(b);
        const now = await deps.batches.get(b.companyId, b.id);
        if (now?.state === 'EXECUTING') await deps.batches.reschedule(b.id, 'EXECUTING', deps.batchSettings.pollMs);
        return;
      }
      default:
        await deps.batches.reschedule(b.id, b.state, null);
    }
  }
}

/** Each executable item's fee and IVA from the company's schedule in force now (one ComputeFeesBatch per rail), by seq. */
async function executionFees(deps: TransferDeps, b: BatchRecord, items: BatchItemDraft[]): Promise<Map<number, FeeBreakdown>> {
  const out = new Map<number, FeeBreakdown>();
  for (const rail of ['BREB', 'ACH'] as const) {
    const mine = items.filter((it) => it.rail === rail);
    if (mine.length === 0) continue;
    const fees = await deps.ledger.computeFeesBatch(b.companyId, rail, mine.map((it) => it.amount), b.ivaApplicable);
    mine.forEach((it, k) => out.set(it.seq, fees[k]!));
  }
  return out;
}

/** The transfer an item becomes (its own id, RECEIVED, owned by the batch). */
function transferOf(deps: TransferDeps, b: BatchRecord, it: BatchItemDraft, approval: ApprovalRef | null): TransferRecord {
  return {
    id: deps.newId(), companyId: b.companyId, apiKeyId: b.apiKeyId, rail: it.rail!, state: 'RECEIVED', amount: it.amount, fee: it.fee as FeeBreakdown,
    targetName: it.targetName, targetDocument: it.targetDocument, reference: it.reference, description: it.description, destination: it.destination!,
    holdId: null, providerTransferId: null, errorMessage: null, dispatchAttempts: 0, approval, approvedAt: null, releaseEvent: null, rejectedBy: null,
    createdAt: deps.now(), dispatchedAt: null, completedAt: null, batchId: b.id,
    destinationFingerprint: it.destinationFingerprint ?? (it.destination ? deps.destinationFingerprint(it.destination) : null),
  };
}

/**
 * Resumes batches between steps (a crash, a ledger outage) and closes finished ones: leases due
 * batches (FOR UPDATE SKIP LOCKED, moved ahead by a lease), so replicas never work on the same one.
 */
export class BatchSweeper {
  private readonly task: PeriodicTask;

  constructor(private readonly deps: BatchDeps, private readonly runner: BatchRunner, private readonly opts: { intervalMs: number; batch: number; leaseMs?: number; fundingLeaseMs?: number }) {
    this.task = new PeriodicTask('batch sweeper', opts.intervalMs, () => this.tick(), deps.log);
  }

  start(): void { this.task.start(); }
  stop(): Promise<void> { return this.task.stop(); }

  async tick(): Promise<number> {
    // A FUNDING batch's lease outlasts a funding attempt (ReserveBatch's deadline is 60 s): two
    // replicas never fund one batch at once. Any other look (dispatch pages, close, settle an
    // approval) is idempotent and its items carry leases of their own, so its lease is as short as
    // the transfer sweeper's: a replica killed mid-look delays the batch 30 s, not 2 minutes.
    const due = await this.deps.batches.leaseDue(this.opts.batch, this.opts.leaseMs ?? 30_000, this.opts.fundingLeaseMs ?? 120_000);
    await Promise.all(due.map((b) => this.runner.resume(b).catch((err: unknown) => {
      this.deps.log.warn({ batchId: b.id, state: b.state, err: (err as Error).message }, 'batch sweeper could not resume a batch; will retry');
      return this.deps.batches.reschedule(b.id, b.state, 5_000).catch(() => undefined);
    })));
    return due.length;
  }
}

