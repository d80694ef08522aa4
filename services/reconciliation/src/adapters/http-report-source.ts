import { Agent, request } from 'undici';
import type { ReportRail } from '../domain/report.js';
import type { ReportRecords, ReportSource } from '../app/ports.js';
import { csvRecords } from './csv-records.js';

export interface HttpReportSourceOptions {
  /** The reports' base URL: `<reportsUrl>/<rail>/<date>.csv` (the sandbox: `http://host:port/sandbox/reports`). */
  reportsUrl: string;
  /** To open the TCP connection. */
  connectTimeoutMs?: number;
  /** From the request to the response's headers (the provider starts its query). */
  headersTimeoutMs?: number;
  /** The longest silence between two chunks of the body (a stalled download). */
  idleTimeoutMs?: number;
  /** The whole download, headers to trailer (a report of a million lines is ~130 MB). */
  totalTimeoutMs?: number;
  /** A secret sent as `Authorization: Bearer <token>` (never logged, never in an error). */
  token?: string;
}

/** Why a download failed: all of these are worth retrying later (the report was not read). */
export type FetchFailure = 'CONNECT' | 'HEADERS_TIMEOUT' | 'IDLE_TIMEOUT' | 'DEADLINE' | 'ABORTED' | 'HTTP_STATUS' | 'NOT_CSV' | 'NETWORK';

export class ReportFetchError extends Error {
  constructor(
    readonly failure: FetchFailure,
    message: string,
    readonly status?: number,
    options?: { cause?: unknown },
  ) {
    super(message, options);
    this.name = 'ReportFetchError';
  }
}

/** 404 REPORT_NOT_AVAILABLE: the provider has not published that day's report yet. */
export class ReportNotAvailableError extends Error {
  constructor(
    readonly rail: ReportRail,
    readonly date: string,
  ) {
    super(`the ${rail} report of ${date} is not published yet`);
    this.name = 'ReportNotAvailableError';
  }
}

function codeOf(err: unknown): string | undefined {
  const e = err as { code?: unknown; cause?: { code?: unknown } } | null;
  const code = e?.code ?? e?.cause?.code;
  return typeof code === 'string' ? code : undefined;
}

/**
 * Downloads a provider's report over HTTP with a streaming body (undici `request`: a Node stream,
 * back-pressure down to the socket) and time-outs on every stage: connect, headers, the silence
 * between chunks and the whole download. A body cut short (the provider's failure after the first
 * byte: no terminating chunk) is an error, never a short report.
 */
export class HttpReportSource implements ReportSource {
  private readonly agent: Agent;
  private readonly totalTimeoutMs: number;

  constructor(private readonly opts: HttpReportSourceOptions) {
    this.agent = new Agent({
      connect: { timeout: opts.connectTimeoutMs ?? 5_000 },
      headersTimeout: opts.headersTimeoutMs ?? 30_000,
      bodyTimeout: opts.idleTimeoutMs ?? 30_000,
    });
    this.totalTimeoutMs = opts.totalTimeoutMs ?? 15 * 60_000;
  }

  url(rail: ReportRail, date: string): string {
    return `${this.opts.reportsUrl.replace(/\/+$/, '')}/${rail}/${date}.csv`;
  }

  async open(rail: ReportRail, date: string, signal?: AbortSignal): Promise<ReportRecords> {
    const deadline = AbortSignal.timeout(this.totalTimeoutMs);
    const combined = signal ? AbortSignal.any([signal, deadline]) : deadline;
    const classify = (err: unknown): ReportFetchError => {
      if (err instanceof ReportFetchError) return err;
      const code = codeOf(err);
      const msg = (err as Error)?.message ?? String(err);
      if (deadline.aborted) return new ReportFetchError('DEADLINE', `the download took longer than ${this.totalTimeoutMs} ms`, undefined, { cause: err });
      if (signal?.aborted) return new ReportFetchError('ABORTED', 'the download was aborted', undefined, { cause: err });
      if (code === 'UND_ERR_CONNECT_TIMEOUT' || code === 'ECONNREFUSED' || code === 'ENOTFOUND' || code === 'EAI_AGAIN') {
        return new ReportFetchError('CONNECT', `cannot reach the provider: ${code}`, undefined, { cause: err });
      }
      if (code === 'UND_ERR_HEADERS_TIMEOUT') return new ReportFetchError('HEADERS_TIMEOUT', 'the provider did not answer in time', undefined, { cause: err });
      if (code === 'UND_ERR_BODY_TIMEOUT') return new ReportFetchError('IDLE_TIMEOUT', 'the download stalled', undefined, { cause: err });
      return new ReportFetchError('NETWORK', `the download failed: ${code ?? msg}`, undefined, { cause: err });
    };

    let res: Awaited<ReturnType<typeof request>>;
    try {
      res = await request(this.url(rail, date), {
        method: 'GET',
        dispatcher: this.agent,
        signal: combined,
        headers: {
          accept: 'text/csv',
          ...(this.opts.token ? { authorization: `Bearer ${this.opts.token}` } : {}),
        },
      });
    } catch (err) {
      throw classify(err);
    }
    if (res.statusCode !== 200) {
      const text = await res.body.text().catch(() => '');
      if (res.statusCode === 404 && text.includes('REPORT_NOT_AVAILABLE')) throw new ReportNotAvailableError(rail, date);
      throw new ReportFetchError('HTTP_STATUS', `the provider answered ${res.statusCode}: ${text.slice(0, 200)}`, res.statusCode);
    }
    const type = String(res.headers['content-type'] ?? '');
    if (!type.startsWith('text/csv')) {
      res.body.on('error', () => undefined).destroy();
      throw new ReportFetchError('NOT_CSV', `the provider answered ${type || 'no content type'}, not text/csv`, res.statusCode);
    }
    return csvRecords(res.body, classify);
  }

  close(): Promise<void> {
    return this.agent.close();
  }
}
