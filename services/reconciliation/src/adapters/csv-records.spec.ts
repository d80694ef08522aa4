import { PassThrough, Readable } from 'node:stream';
import { ReportFormatError } from '../domain/report.js';
import { csvRecords } from './csv-records.js';

async function all(it: AsyncIterable<ReadonlyArray<readonly string[]>>): Promise<Array<readonly string[]>> {
  const out: Array<readonly string[]> = [];
  for await (const batch of it) out.push(...batch);
  return out;
}

describe('csvRecords (csv-parse, streamed, in batches)', () => {
  it('reads RFC 4180: CRLF records, quoted commas, doubled quotes and line breaks, records of varying length', async () => {
    const text = 'a,b\r\n"Pérez, ""Toño""\nLtda.",2\r\nTRAILER,1,2,0\r\n';
    // One byte at a time: a record split across any chunk boundary.
    const body = Readable.from([...Buffer.from(text)].map((b) => Buffer.from([b])));
    expect(await all(csvRecords(body))).toEqual([
      ['a', 'b'],
      ['Pérez, "Toño"\nLtda.', '2'],
      ['TRAILER', '1', '2', '0'],
    ]);
  });

  it('hands records out in batches of at most 1,000', async () => {
    const body = Readable.from([Array.from({ length: 2500 }, (_, i) => `r${i},x\r\n`).join('')]);
    const sizes: number[] = [];
    for await (const batch of csvRecords(body)) sizes.push(batch.length);
    expect(sizes.reduce((a, b) => a + b, 0)).toBe(2500);
    expect(Math.max(...sizes)).toBeLessThanOrEqual(1000);
  });

  it("a CSV syntax error is the report's fault: MALFORMED_CSV", async () => {
    await expect(all(csvRecords(Readable.from(['a,b\r\n"unclosed,1\r\n'])))).rejects.toMatchObject({ name: 'ReportFormatError', reason: 'MALFORMED_CSV' });
    // A record longer than 64 KiB (an unclosed quote swallowing the file) is refused too, without buffering the rest.
    const huge = Readable.from(['"', 'x'.repeat(70 * 1024), '"\r\n']);
    await expect(all(csvRecords(huge))).rejects.toBeInstanceOf(ReportFormatError);
  });

  it('a transport error is passed through the mapping, never taken for the end of the report', async () => {
    const body = new PassThrough();
    body.write('a,b\r\n1,2\r\n');
    setTimeout(() => body.destroy(new Error('socket hang up')), 10);
    await expect(all(csvRecords(body, (e) => new Error(`mapped: ${(e as Error).message}`)))).rejects.toThrow('mapped: socket hang up');
  });

  it('leaving the iteration early destroys the body (ends the download)', async () => {
    const body = new PassThrough();
    body.write('a,b\r\n1,2\r\n');
    for await (const batch of csvRecords(body)) {
      expect(batch[0]).toEqual(['a', 'b']);
      break;
    }
    expect(body.destroyed).toBe(true);
  });
});
