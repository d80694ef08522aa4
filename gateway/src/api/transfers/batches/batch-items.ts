import { AppError, type FieldProblem } from '@wallet/platform';
import type { transferV1 } from '@wallet/proto';
import type { z } from 'zod';
import { sendRequestOf } from '../presenters.js';
import { BatchItemBody } from '../schemas.js';
import { issuesToFields, spanish } from '../../../http/validation.js';

/** The most items a batch holds (docs/batches.md). */
export const MAX_BATCH_ITEMS = 10_000;
/** The largest batch request body, JSON or CSV: 10,000 items with room for long names and descriptions. */
export const MAX_BATCH_BODY_BYTES = 10 * 1024 * 1024;
/** An invalid item's message is kept readable (and bounded) when an item has many problems. */
const MAX_INVALID_MESSAGE_CHARS = 1_000;

export type SendItem = z.output<typeof BatchItemBody>;

/** One item as the client gave it, before its shape is checked: a JSON item, or a CSV row turned into SendBody's shape. */
export interface BatchItemDraft {
  /** CSV: the file's line where the row starts (header = 1); JSON: null. */
  line: number | null;
  /** A SendBody-shaped value (anything, for JSON). */
  input: unknown;
  /** Problems found while turning a CSV row into that shape (they replace SendBody's messages at the same path). */
  problems?: FieldProblem[];
  /** How a SendBody path is named to this client (CSV: its column); the path itself when it returns undefined. */
  label?: (path: string) => string | undefined;
}

/** An item after its shape was checked: a send, or the Spanish message of why it is not one. */
export type BatchItem =
  | { seq: number; line: number | null; send: SendItem; invalidMessage?: undefined }
  | { seq: number; line: number | null; send?: undefined; invalidMessage: string };

/** 422 VALIDATION_ERROR: more than MAX_BATCH_ITEMS items. */
export function tooManyItems(): AppError {
  const max = MAX_BATCH_ITEMS.toLocaleString('es-CO');
  return new AppError('VALIDATION_ERROR', `El lote no puede tener más de ${max} ítems.`, { fields: [{ path: 'items', message: `a lo sumo ${max} ítems` }] });
}

/**
 * Checks each item on its own with the same schema as POST /transfers/send: an item that fails is
 * not an error of the request but an invalid item, with `'<path>: <mensaje>; …'`.
 */
export function validateItems(drafts: readonly BatchItemDraft[]): BatchItem[] {
  return drafts.map((d, i) => {
    const seq = i + 1;
    const r = BatchItemBody.safeParse(d.input, { error: spanish });
    const own = d.problems ?? [];
    if (r.success && own.length === 0) return { seq, line: d.line, send: r.data };
    const covered = new Set(own.map((p) => p.path));
    const fields = [...own, ...(r.success ? [] : issuesToFields(r.error.issues).filter((f) => !covered.has(f.path)))];
    return { seq, line: d.line, invalidMessage: invalidMessage(fields, d.label) };
  });
}

function invalidMessage(fields: readonly FieldProblem[], label?: (path: string) => string | undefined): string {
  const text = fields
    .map((f) => {
      const path = label?.(f.path) ?? f.path;
      return path ? `${path}: ${f.message}` : f.message;
    })
    .join('; ');
  return text.length > MAX_INVALID_MESSAGE_CHARS ? `${text.slice(0, MAX_INVALID_MESSAGE_CHARS - 1)}…` : text;
}

/**
 * 422 VALIDATION_ERROR when two items carry the same `reference` (non-empty, exact match after
 * trimming): each repetition is named (`items.<i>.reference`, or `line <n>` for a CSV) with where
 * the reference first appeared. Nothing is sent to the transfer service then.
 */
export function assertUniqueReferences(drafts: readonly BatchItemDraft[]): void {
  const first = new Map<string, number>();
  const fields: FieldProblem[] = [];
  const where = (i: number) => {
    const line = drafts[i]!.line;
    return line === null ? { path: `items.${i}.reference`, text: `items.${i}.reference` } : { path: `line ${line}`, text: `la línea ${line}` };
  };
  drafts.forEach((d, i) => {
    const raw = d.input && typeof d.input === 'object' ? (d.input as Record<string, unknown>).reference : undefined;
    if (typeof raw !== 'string' || raw.trim() === '') return;
    const ref = raw.trim();
    const seen = first.get(ref);
    if (seen === undefined) {
      first.set(ref, i);
      return;
    }
    fields.push({ path: where(i).path, message: `La referencia "${ref}" se repite en ${where(i).text}; apareció antes en ${where(seen).text}.` });
  });
  if (fields.length === 0) return;
  const shown = fields.slice(0, 100);
  throw new AppError(
    'VALIDATION_ERROR',
    `Las referencias de los ítems no pueden repetirse dentro del lote (${fields.length} repetida${fields.length === 1 ? '' : 's'}).`,
    { fields: shown },
  );
}

/** An item for CreateBatch: the send as POST /transfers/send would make it, or the invalid item's answer. */
export function toBatchItemInput(item: BatchItem): transferV1.BatchItemInput {
  const line = item.line ?? 0;
  if (item.send === undefined) return { seq: item.seq, line, invalidCode: 'INVALID_REQUEST', invalidMessage: item.invalidMessage };
  return { seq: item.seq, line, send: { ...sendRequestOf(item.send), requestHash: '' } };
}
