import { AppError } from '@wallet/platform';
import {
  BATCH_TTL_MS,
  MAX_BATCH_ITEMS,
  type BatchItemDraft,
  type BatchItemRecord,
  type BatchMode,
  type BatchRecord,
  type BatchSource,
  type BatchState,
  type BatchSummary,
} from '../domain/batch.js';
import type { PolicyDecision } from '../domain/approval-policy.js';
import { bogotaWindows } from '../domain/counterparty-limits.js';
import { normalizeDocument } from '../domain/names.js';
import { CAP_ERROR, RAIL_CAPS, type Rail } from '../domain/rails.js';
import type { Destination } from '../domain/transfer.js';
import { BATCH_MESSAGES } from './batch-messages.js';
import type { BatchStore } from './batch-ports.js';
import type { CallerOf } from './batch-queries.js';
import { BatchSaga } from './batch-saga.js';
import { amlScreen, limitKeysOf, limitVerdicts, refusal } from './batch-screening.js';
import type { BatchDeps } from './deps.js';
import { mapBounded } from './map-bounded.js';
import { amlAccountOf, checkDestination, directLookups, memoisedLookups, type DirectoryRefusal } from './send-destination.js';
import { RESOLVE_MESSAGES, notFoundAsError } from './resolve-key.js';
import { IDEMPOTENCY_KEY, validateSend, type CompanyProfile, type SendCommand, type SendInput } from './send-input.js';
import { Problems, checkText, orNull, requireCompany } from './validation.js';

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

export interface ItemResult {
  seq: number;
  line: number | null;
  valid: boolean;
  errorCode: string | null;
  message: string | null;
  /** A valid line of a VALIDATED batch: what the policy in force would decide for it now. */
  policy?: PolicyDecision;
}

export interface CreateBatchResult {
  batch: BatchSummary;
  results: ItemResult[];
  replayed: boolean;
  keyReplayed: boolean;
  /** A VALIDATED batch: what the policy in force would decide if it were executed now (nothing reserved or counted). */
  policy?: { total: PolicyDecision; combined: PolicyDecision };
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
  constructor(
    private readonly deps: BatchDeps,
    private readonly saga: BatchSaga = new BatchSaga(deps),
  ) {}

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
    input.items.forEach((it, i) => {
      if (it.seq !== i + 1) p.add(`items.${i}.seq`, `must be ${i + 1}`);
    });
    p.throwIfAny();
    if (input.items.length > MAX_BATCH_ITEMS) {
      throw new AppError('VALIDATION_ERROR', `El lote tiene ${input.items.length} transferencias; el máximo es ${MAX_BATCH_ITEMS.toLocaleString('es-CO')}.`, {
        fields: [{ path: 'items', message: `at most ${MAX_BATCH_ITEMS}` }],
      });
    }
    checkDuplicateReferences(input.items);
    const requestHash = orNull(input.requestHash) ?? `svc:${deps.newId()}`;

    const replay = await this.replayed(companyId, requestHash, idempotencyKey, reference, company);
    if (replay) return replay;

    const drafts = await validateItems(deps, companyId, company, input.items);
    const validCount = drafts.filter((d) => d.status === 'VALID').length;
    const invalidCount = drafts.length - validCount;
    const state: BatchState = validCount === 0 || (mode === 'ALL' && invalidCount > 0) ? 'REJECTED' : 'VALIDATED';
    const now = deps.now();
    const batch: BatchRecord = {
      id: deps.newId(),
      companyId,
      apiKeyId: caller.apiKeyId ?? null,
      state,
      reference,
      description,
      mode,
      source,
      itemCount: drafts.length,
      validCount,
      invalidCount,
      ivaApplicable: company.ivaApplicable,
      createdAt: now,
      expiresAt: new Date(now.getTime() + BATCH_TTL_MS),
      executedAt: null,
      completedAt: null,
      cancelledAt: null,
      errorMessage: null,
    };
    const summary = summaryOfDrafts(batch, drafts);
    const outcome = await this.saga.create(batch, summary, requestHash, idempotencyKey, drafts);
    if (outcome !== 'OK') {
      // A concurrent twin stored its batch first: it is the answer (or a conflict).
      const again = await this.replayed(companyId, requestHash, idempotencyKey, reference, company);
      if (again) return again;
      throw new AppError('INTERNAL_ERROR');
    }
    deps.log.info({ batchId: batch.id, companyId, items: drafts.length, valid: validCount, state }, 'batch validated');
    return explained(deps, company, { batch: summary, results: drafts.map(resultOf), replayed: false, keyReplayed: false }, drafts);
  }

  private async replayed(
    companyId: string,
    requestHash: string,
    key: string | null,
    reference: string | null,
    company: CompanyProfile,
  ): Promise<CreateBatchResult | undefined> {
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
    return explained(this.deps, company, { batch: summary!, results: items.map(resultOf), replayed: true, keyReplayed: byKey }, items);
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
    throw new AppError('VALIDATION_ERROR', `Hay referencias repetidas dentro del lote (${fields.length}); cada ítem debe tener una referencia única.`, {
      fields: fields.slice(0, 100),
    });
  }
}

/**
 * The validation report explains (docs/policies.md "Bulk payouts"): for a VALIDATED batch, what the
 * policy in force would decide for each valid line, for the total, and the approval the batch would
 * wait for, were it executed now. Nothing is reserved or counted; execution decides again.
 */
async function explained(
  deps: BatchDeps,
  company: CompanyProfile,
  r: CreateBatchResult,
  lines: Array<{ seq: number; status: string; amount: bigint; rail: Rail | null; destination: Destination | null }>,
): Promise<CreateBatchResult> {
  if (r.batch.state !== 'VALIDATED' || !deps.policies) return r;
  const valid = lines.filter((l) => l.status === 'VALID' && l.rail);
  const verdict = await deps.policies.decideBatch({
    companyId: r.batch.companyId,
    multiSigThreshold: company.multiSigThreshold,
    lines: valid.map((l) => ({
      seq: l.seq,
      amount: l.amount,
      rail: l.rail!,
      destinationFingerprint: l.destination ? deps.destinationFingerprint(l.destination) : null,
    })),
    at: deps.now(),
    claim: false,
  });
  return {
    ...r,
    results: r.results.map((x) => {
      const d = verdict.lines.get(x.seq);
      return d ? { ...x, policy: d } : x;
    }),
    policy: { total: verdict.total, combined: verdict.combined },
  };
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
    if (d.status !== 'VALID' || !d.rail || !d.fee) {
      invalidAmount += d.amount;
      continue;
    }
    validAmount += d.amount;
    const t = totals.get(d.rail) ?? { rail: d.rail, count: 0, amount: 0n, fee: 0n, iva: 0n, total: 0n };
    t.count += 1;
    t.amount += d.amount;
    t.fee += d.fee.subtotalFee;
    t.iva += d.fee.ivaAmount;
    t.total += d.amount + d.fee.subtotalFee + d.fee.ivaAmount;
    totals.set(d.rail, t);
  }
  const byStatus: BatchSummary['byStatus'] = [];
  if (b.invalidCount > 0) byStatus.push({ status: 'INVALID', count: b.invalidCount, amount: invalidAmount });
  if (b.validCount > 0) byStatus.push({ status: 'VALID', count: b.validCount, amount: validAmount });
  return { ...b, approval: null, totals: [...totals.values()].sort((x, y) => x.rail.localeCompare(y.rail)), byStatus, finishedCount: b.invalidCount };
}

interface Candidate {
  seq: number;
  line: number | null;
  cmd: SendCommand;
  counterparty: string;
  account: string | null;
}

/**
 * A batch line's directory verdict (docs/batches.md): a well-formed key the directory does not know is
 * KEY_NOT_FOUND, as the line's result says (INVALID_KEY stays for a malformed key). A single send
 * answers it INVALID_KEY over HTTP (KEY_NOT_FOUND is a 404 there); a line's code is no HTTP status.
 */
const batchLineRefusal: DirectoryRefusal = (code) =>
  code === 'KEY_NOT_FOUND' ? new AppError('KEY_NOT_FOUND', RESOLVE_MESSAGES.KEY_NOT_FOUND) : notFoundAsError(code);

/** Every check of a send for every item, reads batched. Items in order; throws only for a whole-batch failure (a provider down). */
async function validateItems(deps: BatchDeps, companyId: string, company: CompanyProfile, items: BatchItemInput[]): Promise<BatchItemDraft[]> {
  const drafts: BatchItemDraft[] = items.map((it) => ({
    seq: it.seq,
    line: it.line > 0 ? it.line : null,
    status: 'VALID',
    rail: null,
    amount: it.send?.amount ?? 0n,
    fee: null,
    targetName: orNull(it.send?.targetName ?? null) ?? '',
    targetDocument: orNull(it.send?.targetDocument ?? null) ?? '',
    counterparty: null,
    reference: orNull(it.send?.reference ?? null),
    description: orNull(it.send?.description ?? null),
    destination: null,
    errorCode: null,
    errorMessage: null,
  }));
  const invalid = (i: number, e: { code: string; message: string }) => {
    const d = drafts[i]!;
    d.status = 'INVALID';
    d.errorCode = e.code;
    d.errorMessage = e.message;
    d.fee = null;
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
  const listed = await amlScreen(
    deps,
    company.nit,
    live.map((c) => ({ document: c.counterparty, account: c.account })),
  );
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
      if (err instanceof AppError && (err.code === 'BREB_DIRECTORY_LOOKUP_FAILED' || err.code === 'ACH_RAIL_UNAVAILABLE' || err.code === 'SERVICE_UNAVAILABLE'))
        throw err;
      invalid(c.seq - 1, refusal(err));
      return undefined;
    }
  });
  const checked = settled.filter((x): x is { c: Candidate; destination: { destination: Destination; targetName: string } } => x !== undefined);
  // fees: one computation per rail
  for (const rail of ['BREB', 'ACH'] as const) {
    const mine = checked.filter((x) => x.c.cmd.rail === rail);
    const fees = await deps.ledger.computeFeesBatch(
      companyId,
      rail,
      mine.map((x) => x.c.cmd.amount),
      company.ivaApplicable,
    );
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
  const verdicts = limitVerdicts(
    deps,
    company,
    limited,
    await deps.batches.limitUsage(companyId, [...new Set(limited.flatMap(limitKeysOf))], bogotaWindows(deps.now())),
  );
  for (const [seq, code] of verdicts) invalid(seq - 1, refusal(new AppError(code as 'COUNTERPARTY_DAILY_LIMIT_EXCEEDED')));
  return drafts;
}
