import { createServer, type IncomingMessage, type Server, type ServerResponse } from 'node:http';
import type { AddressInfo } from 'node:net';
import { HttpReportSource, ReportFetchError, ReportNotAvailableError } from '../src/adapters/http-report-source.js';
import { SpillSorter } from '../src/adapters/spill-sorter.js';
import { reconcile } from '../src/app/reconcile.js';
import { ArrayOurRecords, InMemoryBreakSink } from '../src/testing.js';

/**
 * The HTTP adapter against a loopback stub that misbehaves on demand: every failure of the
 * download is an error to retry (ReportFetchError), never a short report.
 */

const HEADER = 'provider_id,our_id,direction,amount_cents,fee_cents,status,value_date,accepted_at,settled_at,counterparty\r\n';
const LINE = 'brb_1,tx-1,OUT,150000,0,COMPLETED,2025-03-14,2025-03-14T13:00:00.000Z,2025-03-14T13:00:03.250Z,3001234567\r\n';
const D = '2025-03-14';

type Handler = (req: IncomingMessage, res: ServerResponse) => void;

describe('HttpReportSource', () => {
  let server: Server;
  let base: string;
  let handler: Handler;
  const sources: HttpReportSource[] = [];
  const source = (opts: Partial<ConstructorParameters<typeof HttpReportSource>[0]> = {}) => {
    const s = new HttpReportSource({ reportsUrl: `${base}/sandbox/reports/`, ...opts });
    sources.push(s);
    return s;
  };
  const read = async (s: HttpReportSource) => {
    const out: string[][] = [];
    for await (const batch of await s.open('breb', D)) out.push(...batch.map((r) => [...r]));
    return out;
  };
  const failure = async (p: Promise<unknown>) => {
    try {
      await p;
    } catch (err) {
      return err;
    }
    throw new Error('did not fail');
  };

  beforeAll(async () => {
    server = createServer((req, res) => handler(req, res));
    await new Promise<void>((r) => server.listen(0, '127.0.0.1', r));
    base = `http://127.0.0.1:${(server.address() as AddressInfo).port}`;
  });
  afterAll(async () => {
    await Promise.all(sources.map((s) => s.close()));
    server.closeAllConnections();
    await new Promise((r) => server.close(r));
  });

  it('downloads <reportsUrl>/<rail>/<date>.csv, streamed, as CSV records', async () => {
    let path = '';
    handler = (req, res) => {
      path = req.url ?? '';
      res.writeHead(200, { 'content-type': 'text/csv; charset=utf-8' });
      res.write(HEADER);
      setTimeout(() => res.end(`${LINE}TRAILER,1,150000,0\r\n`), 20);
    };
    expect(await read(source())).toEqual([HEADER.trim().split(','), LINE.trim().split(','), ['TRAILER', '1', '150000', '0']]);
    expect(path).toBe(`/sandbox/reports/breb/${D}.csv`);
  });

  it('sends the token as a Bearer credential when one is configured, and no Authorization otherwise; a 401 is a fetch error without the token', async () => {
    const seen: Array<string | undefined> = [];
    handler = (req, res) => {
      seen.push(req.headers.authorization);
      if (req.headers.authorization !== 'Bearer s3cret-report-token') {
        res.writeHead(401, { 'content-type': 'application/json' }).end('{"code":"UNAUTHORIZED"}');
        return;
      }
      res.writeHead(200, { 'content-type': 'text/csv' }).end(`${HEADER}${LINE}TRAILER,1,150000,0\r\n`);
    };
    expect(await read(source({ token: 's3cret-report-token' }))).toHaveLength(3);
    const err = (await failure(read(source()))) as ReportFetchError;
    expect(err).toBeInstanceOf(ReportFetchError);
    expect(err.failure).toBe('HTTP_STATUS');
    expect(seen).toEqual(['Bearer s3cret-report-token', undefined]);
    const wrong = (await failure(read(source({ token: 'wrong-token-value' })))) as Error;
    expect(wrong.message).not.toContain('wrong-token-value');
  });

  it('404 REPORT_NOT_AVAILABLE: not published yet; other answers are fetch errors', async () => {
    handler = (_req, res) => res.writeHead(404, { 'content-type': 'application/json' }).end('{"error":"REPORT_NOT_AVAILABLE"}');
    expect(await failure(read(source()))).toBeInstanceOf(ReportNotAvailableError);
    handler = (_req, res) => res.writeHead(503, { 'content-type': 'application/json' }).end('{"error":"UNAVAILABLE"}');
    expect(await failure(read(source()))).toMatchObject({ failure: 'HTTP_STATUS', status: 503 });
    handler = (_req, res) => res.writeHead(200, { 'content-type': 'text/html' }).end('<html>login</html>');
    expect(await failure(read(source()))).toMatchObject({ failure: 'NOT_CSV' });
  });

  it('a provider that does not answer: HEADERS_TIMEOUT', async () => {
    handler = () => {
      /* never answers */
    };
    expect(await failure(read(source({ headersTimeoutMs: 150 })))).toMatchObject({ name: 'ReportFetchError', failure: 'HEADERS_TIMEOUT' });
  });

  it('a download that stalls: IDLE_TIMEOUT', async () => {
    handler = (_req, res) => {
      res.writeHead(200, { 'content-type': 'text/csv' });
      res.write(HEADER + LINE); // then nothing
    };
    expect(await failure(read(source({ idleTimeoutMs: 150 })))).toMatchObject({ failure: 'IDLE_TIMEOUT' });
  });

  it('a download that trickles past the whole-download limit: DEADLINE', async () => {
    handler = (_req, res) => {
      res.writeHead(200, { 'content-type': 'text/csv' });
      res.write(HEADER);
      const t = setInterval(() => {
        if (!res.destroyed) res.write(LINE);
      }, 30);
      res.on('close', () => clearInterval(t));
    };
    expect(await failure(read(source({ idleTimeoutMs: 1000, totalTimeoutMs: 300 })))).toMatchObject({ failure: 'DEADLINE' });
  });

  it('a body cut short (the provider failed after the first byte) is an error, and reconcile throws rather than rejecting', async () => {
    handler = (_req, res) => {
      res.writeHead(200, { 'content-type': 'text/csv' });
      res.write(HEADER + LINE);
      setTimeout(() => res.destroy(), 20); // no terminating chunk
    };
    expect(await failure(read(source()))).toMatchObject({ failure: 'NETWORK' });
    const sink = new InMemoryBreakSink();
    const err = await failure(
      reconcile('breb', D, await source().open('breb', D), {
        ours: new ArrayOurRecords({}),
        sink,
        sorter: () => new SpillSorter(),
      }),
    );
    expect(err).toBeInstanceOf(ReportFetchError);
    expect(sink.calls).toBe(0);
  });

  it('nobody listening: CONNECT', async () => {
    const probe = createServer();
    await new Promise<void>((r) => probe.listen(0, '127.0.0.1', r));
    const port = (probe.address() as AddressInfo).port;
    await new Promise((r) => probe.close(r));
    const s = new HttpReportSource({ reportsUrl: `http://127.0.0.1:${port}/r` });
    sources.push(s);
    expect(await failure(read(s))).toMatchObject({ failure: 'CONNECT' });
  });
});
