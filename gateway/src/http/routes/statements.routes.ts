import { z } from 'zod';
import { AppError } from '@wallet/platform';
import { MAX_JSON_STATEMENT_LINES, MAX_STATEMENT_DAYS, StatementQuery } from '../../app/statement.js';
import type { LedgerClient } from '../../ledger/ledger-client.js';
import { StatementSchema } from '../api-schemas.js';
import { defineRoute, type AnyRoute, type HandlerResult } from '../route.js';

/**
 * A statement bound: an ISO 8601 date-time with its offset, or a bare date meaning that day's
 * 00:00 in Bogotá (UTC−5 all year).
 */
const INSTANT = /^\d{4}-\d{2}-\d{2}T\d{2}:\d{2}(:\d{2}(\.\d{1,9})?)?(Z|[+-]\d{2}:\d{2})$/;
const BARE_DATE = /^\d{4}-\d{2}-\d{2}$/;
const boundParam = () => z.string()
  .refine((s) => (INSTANT.test(s) && !Number.isNaN(Date.parse(s))) || (BARE_DATE.test(s) && !Number.isNaN(Date.parse(`${s}T00:00:00-05:00`)) && new Date(`${s}T00:00:00Z`).toISOString().startsWith(s)),
    { message: 'Debe ser una fecha (AAAA-MM-DD, hora de Bogotá) o un instante ISO 8601 con zona horaria.' })
  .transform((s) => new Date(Date.parse(BARE_DATE.test(s) ? `${s}T00:00:00-05:00` : s)));

export const StatementQuerySchema = z.strictObject({
  rail: z.enum(['BREB', 'ACH']).meta({ description: 'The wallet: BREB or ACH.' }),
  from: boundParam().meta({ description: 'Start (exclusive): `2026-11-01` (00:00 Bogotá) or an ISO 8601 instant with offset.' }),
  to: boundParam().meta({ description: 'End (inclusive): `2026-12-01` (00:00 Bogotá) or an instant; not in the future.' }),
  format: z.enum(['json', 'csv', 'pdf']).optional().transform((v) => v ?? 'json')
    .meta({ description: '`json` (default, at most 10,000 lines), `csv` (streamed, any size); `pdf` is not available yet (422).' }),
});

const DAY_MS = 86_400_000;

export function statementRoutes(ledger: LedgerClient, now: () => Date = () => new Date()): AnyRoute[] {
  const statements = new StatementQuery(ledger);
  return [
    defineRoute({
      method: 'GET', path: '/wallets/statements', operationId: 'getStatement', tags: ['Wallets'],
      summary: "A wallet's statement between two instants (JSON or CSV)",
      description: [
        'The available balance at `from` (opening) and at `to` (closing), both from the journal (as GET /wallets/balance/history),',
        'and every line in between that changed the available balance, oldest first, each with the running balance: opening +',
        'the lines\' `amountCents` = closing, exactly. A send is one movement: one `TRANSFER_OUT` line at its reserve (amount + fee + IVA;',
        'its completion changes nothing available), plus a `TRANSFER_OUT_RETURNED` line when it failed and its money came back.',
        'A send still in flight at `to` is in `closing.pendingOutCents`. The period is (from, to]; at most 366 days.',
        `JSON carries at most ${MAX_JSON_STATEMENT_LINES} lines (more: 422, use format=csv). CSV: UTF-8 with BOM, \`;\`-separated,`,
        'CRLF, amounts in pesos with a decimal comma, dates in Bogotá time; streamed. `format=pdf`: 422 VALIDATION_ERROR (not yet available).',
        'See docs/statements.md.',
      ].join(' '),
      auth: { kind: 'apiKey', scope: 'READ' }, rateClass: 'READS',
      query: StatementQuerySchema,
      responses: {
        200: {
          description: 'The statement: JSON (`format=json`) or a CSV file (`format=csv`, `Content-Disposition: attachment`).',
          schema: StatementSchema,
          contentType: 'text/csv',
          headers: { 'Content-Disposition': { description: 'On CSV: `attachment; filename="extracto-<rail>-<from>-<to>.csv"`.', schema: { type: 'string' } } },
        },
      },
      errors: ['VALIDATION_ERROR', 'WALLET_NOT_PROVISIONED', 'FAST_WALLET_MISSING', 'SERVICE_UNAVAILABLE'],
      handler: async ({ query, principal, call }): Promise<HandlerResult> => {
        const invalid = (message: string, path: string, field: string) => new AppError('VALIDATION_ERROR', message, { fields: [{ path, message: field }] });
        if (query.format === 'pdf') throw invalid('El extracto en PDF aún no está disponible; use format=json o format=csv.', 'format', 'pdf aún no disponible');
        if (query.from.getTime() >= query.to.getTime()) throw invalid('La fecha inicial (from) debe ser anterior a la final (to).', 'from', 'debe ser anterior a to');
        if (query.to.getTime() > now().getTime()) throw invalid('La fecha final (to) no puede estar en el futuro.', 'to', 'no puede estar en el futuro');
        if (query.to.getTime() - query.from.getTime() > MAX_STATEMENT_DAYS * DAY_MS) {
          throw invalid(`El periodo no puede superar ${MAX_STATEMENT_DAYS} días.`, 'to', `a lo sumo ${MAX_STATEMENT_DAYS} días después de from`);
        }
        const req = { rail: query.rail, from: query.from, to: query.to };
        const company = { name: principal!.companyName, nit: principal!.nit };
        if (query.format === 'csv') {
          const body = await statements.csv(req, company, call);
          const day = (d: Date) => new Date(d.getTime() - 5 * 3_600_000).toISOString().slice(0, 10);
          return {
            status: 200, body,
            headers: {
              'Content-Type': 'text/csv; charset=utf-8',
              'Content-Disposition': `attachment; filename="extracto-${query.rail}-${day(query.from)}-${day(query.to)}.csv"`,
              'Cache-Control': 'private, no-store',
            },
          };
        }
        return { status: 200, body: await statements.json(req, company, call), headers: { 'Cache-Control': 'private, no-store' } };
      },
    }),
  ];
}
