import { createReadStream } from 'node:fs';
import { pipeline, type Readable } from 'node:stream';
import { CsvError, parse } from 'csv-parse';
import { REPORT_CSV_OPTIONS, ReportFormatError } from '../domain/report.js';

const BATCH = 1000;

/** A batch of records, as the iteration hands them out. */
export type RecordBatches = AsyncGenerator<string[][], void, undefined>;

/** Resolves at the parser's next event that may change what `read()` returns. */
function wake(s: Readable): Promise<void> {
  return new Promise((resolve) => {
    const done = () => {
      for (const e of EVENTS) s.off(e, done);
      resolve();
    };
    for (const e of EVENTS) s.on(e, done);
  });
}
const EVENTS = ['readable', 'end', 'close', 'error'] as const;

/**
 * A report's bytes as CSV records, in batches, through csv-parse's streaming parser (back-pressure:
 * the body is read as fast as the records are consumed; batches because one await per record costs
 * more than the rest of a line's matching). A CSV syntax error is the report's fault
 * (ReportFormatError MALFORMED_CSV: the report is rejected); any other error (the transport) is
 * passed through `transportError`. Ending the iteration early destroys the body (ends a download).
 */
export async function* csvRecords(body: Readable, transportError: (err: unknown) => unknown = (e) => e): RecordBatches {
  const parser = parse({ ...REPORT_CSV_OPTIONS });
  let failure: unknown;
  let ended = false;
  // pipeline destroys the parser with the body's error (or a premature close): every failure is the parser's.
  pipeline(body, parser, () => undefined);
  parser.on('error', (err) => {
    failure ??= err;
  });
  parser.once('end', () => {
    ended = true;
  });
  try {
    for (;;) {
      const batch: string[][] = [];
      let record: string[] | null;
      while (batch.length < BATCH && (record = parser.read() as string[] | null) !== null) batch.push(record);
      if (batch.length) {
        yield batch;
        continue;
      }
      if (failure !== undefined) throw failure;
      if (ended) return;
      if (parser.destroyed) throw failure ?? new Error('the report stream closed early');
      await wake(parser);
    }
  } catch (err) {
    if (err instanceof CsvError) throw new ReportFormatError('MALFORMED_CSV', `not a CSV report: ${err.message}`);
    throw transportError(err);
  } finally {
    parser.destroy();
    body.destroy();
  }
}

/** A report stored as a file. */
export function fileReportRecords(path: string): RecordBatches {
  return csvRecords(createReadStream(path, { highWaterMark: 256 * 1024 }));
}
