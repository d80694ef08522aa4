import { randomUUID } from 'node:crypto';
import { z } from 'zod';
import { checkStatementPeriod, MAX_JSON_STATEMENT_LINES, StatementQuery } from './statement.js';
import { statementFile } from './presenters.js';
import { statementPdf } from './statement-pdf.js';
import { statementMt940 } from './statement-mt940.js';
import { camt053Stream } from './statement-camt053.js';
import type { LedgerClient } from '../../clients/ledger-client.js';
import { StatementSchema } from './schemas.js';
import { defineRoute, type AnyRoute, type HandlerResult } from '../../http/route.js';
import { instantParam } from '../../http/validation.js';

/**
 * A statement bound: an ISO 8601 date-time with its offset, or a bare date meaning that day's
 * 00:00 in Bogotá (UTC−5 all year).
 */
const boundParam = () => instantParam({ bogotaDates: true });

export const StatementQuerySchema = z.strictObject({
  rail: z.enum(['BREB', 'ACH']).meta({ description: 'The wallet: BREB or ACH.' }),
  from: boundParam().meta({
    description:
      "Start (exclusive): `2026-11-01` (00:00 Bogotá) or an RFC 3339 instant with offset, up to 6 fraction digits kept (the previous statement's last `postedAt` starts the next one with no line twice).",
    example: '2026-11-01',
  }),
  to: boundParam().meta({
    description: 'End (inclusive): `2026-12-01` (00:00 Bogotá) or an instant (microseconds kept); not in the future.',
    example: '2026-11-28T16:39:52.123456Z',
  }),
  format: z
    .enum(['json', 'csv', 'pdf', 'mt940', 'camt053'])
    .optional()
    .transform((v) => v ?? 'json')
    .meta({
      description:
        '`json` (default, at most 10,000 lines), `csv` (streamed, any size), `pdf` (printable, in Spanish, at most 10,000 lines), `mt940` (SWIFT MT940 for accounting software, at most 10,000 lines), `camt053` (ISO 20022 camt.053.001.08 XML, at most 10,000 lines).',
    }),
});

export function statementRoutes(ledger: LedgerClient, now: () => Date = () => new Date()): AnyRoute[] {
  const statements = new StatementQuery(ledger);
  return [
    defineRoute({
      method: 'GET',
      path: '/wallets/statements',
      operationId: 'getStatement',
      tags: ['Wallets'],
      summary: "A wallet's statement between two instants (JSON, CSV, PDF, MT940 or camt.053)",
      description: [
        'The available balance at `from` (opening) and at `to` (closing), both from the journal (as GET /wallets/balance/history),',
        'and every line in between that changed the available balance, oldest first, each with the running balance: opening +',
        "the lines' `amountCents` = closing, exactly. A send is one movement: one `TRANSFER_OUT` line at its reserve (amount + fee + IVA;",
        'its completion changes nothing available), plus a `TRANSFER_OUT_RETURNED` line when it failed and its money came back.',
        'A send still in flight at `to` is in `closing.pendingOutCents`. The period is (from, to]; at most 366 days.',
        `JSON carries at most ${MAX_JSON_STATEMENT_LINES} lines (more: 422, use format=csv). CSV: UTF-8 with BOM, \`;\`-separated,`,
        "CRLF, amounts in pesos with a decimal comma, dates in Bogotá time; streamed. PDF: A4 landscape, in Spanish, the company's name and NIT,",
        'the period and dates in Bogotá time, es-CO amounts (`$ 1.234.567,89`), the lines with débito / crédito / saldo, totals and closing',
        `balance, "Página n de m"; at most ${MAX_JSON_STATEMENT_LINES} lines as JSON (more: 422, use format=csv); streamed page by page.`,
        'MT940: a SWIFT customer statement message (`text/plain`, US-ASCII, CRLF; `:25:` the NIT and the wallet, `:60F:`/`:62F:` the opening and',
        'closing balances, one `:61:` per line with its `:86:` details), at most as many lines as JSON.',
        'camt.053: an ISO 20022 `camt.053.001.08` BankToCustomerStatement (`application/xml`, UTF-8; the account `<NIT>/<rail>` owned by the company',
        '(name, NIT), OPBD / CLBD / CLAV balances at the exact bounds, totals, one booked `Ntry` per line with its ISO bank transaction code',
        "and the line's entry as proprietary code, amounts in pesos with a decimal point and CRDT/DBIT), at most as many lines as JSON.",
        'See docs/statements.md.',
      ].join(' '),
      auth: { kind: 'apiKey', scope: 'READ' },
      rateClass: 'READS',
      query: StatementQuerySchema,
      responses: {
        200: {
          description:
            'The statement: JSON (`format=json`), a CSV file (`format=csv`), a PDF file (`format=pdf`), an MT940 file (`format=mt940`, `.sta`, `text/plain`) or an ISO 20022 camt.053.001.08 file (`format=camt053`, `.xml`, `application/xml`); the files with `Content-Disposition: attachment`.',
          schema: StatementSchema,
          contentType: ['text/csv', 'application/pdf', 'text/plain', 'application/xml'],
          headers: {
            'Content-Disposition': {
              description:
                'On CSV, PDF, MT940 and camt.053: `attachment; filename="extracto-<rail>-<from>-<to>.csv"` (`.pdf`, `.sta`, `.xml`), the dates of the period\'s bounds in Bogotá.',
              schema: { type: 'string' },
            },
          },
        },
      },
      errors: ['VALIDATION_ERROR', 'WALLET_NOT_PROVISIONED', 'FAST_WALLET_MISSING', 'SERVICE_UNAVAILABLE'],
      handler: async ({ query, principal, call }): Promise<HandlerResult> => {
        checkStatementPeriod(query.from, query.to, now());
        const req = { rail: query.rail, from: query.from, to: query.to };
        const company = { name: principal!.companyName, nit: principal!.nit };
        if (query.format === 'csv') return statementFile(req, 'csv', await statements.csv(req, company, call));
        // PDF: the JSON statement (its cap and its check), then drawn as the client reads.
        if (query.format === 'pdf') return statementFile(req, 'pdf', statementPdf(await statements.json(req, company, call), { generatedAt: now() }));
        if (query.format === 'mt940') return statementFile(req, 'sta', statementMt940(await statements.json(req, company, call)));
        if (query.format === 'camt053') {
          const doc = await statements.json(req, company, call);
          return statementFile(req, 'xml', camt053Stream(doc, { generatedAt: now(), messageId: randomUUID().replace(/-/g, '') }));
        }
        return { status: 200, body: await statements.json(req, company, call), headers: { 'Cache-Control': 'private, no-store' } };
      },
    }),
  ];
}
