import { createHmac, timingSafeEqual } from 'node:crypto';
import { createServer, type IncomingHttpHeaders, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { eventually } from '@wallet/platform/testing';

export const SECRET = 'test-callback-secret';

export interface ReceivedCallback {
  path: string;
  headers: IncomingHttpHeaders;
  raw: string;
  body: Record<string, unknown>;
  status: number;
  at: number;
}

/**
 * A product stand-in: a loopback HTTP server that records every callback and answers with the
 * status `respond` picks (200 unless told otherwise).
 */
export class CallbackReceiver {
  readonly received: ReceivedCallback[] = [];
  respond: (req: { path: string; body: Record<string, unknown>; nth: number }) => number = () => 200;

  private constructor(
    private readonly server: Server,
    readonly url: string,
  ) {}

  static async start(): Promise<CallbackReceiver> {
    let self: CallbackReceiver | undefined;
    const server = createServer((req, res) => {
      const chunks: Buffer[] = [];
      req.on('data', (c: Buffer) => chunks.push(c));
      req.on('end', () => {
        const raw = Buffer.concat(chunks).toString('utf8');
        let body: Record<string, unknown> = {};
        try {
          body = JSON.parse(raw) as Record<string, unknown>;
        } catch {
          /* recorded raw */
        }
        const path = req.url ?? '/';
        const nth = self!.received.filter((r) => r.path === path).length + 1;
        const status = self!.respond({ path, body, nth });
        self!.received.push({ path, headers: req.headers, raw, body, status, at: Date.now() });
        res.writeHead(status, { 'content-type': 'application/json' }).end('{}');
      });
    });
    await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
    self = new CallbackReceiver(server, `http://127.0.0.1:${(server.address() as AddressInfo).port}`);
    return self;
  }

  /** A callback URL unique to one test, so tests do not see each other's callbacks. */
  urlFor(name: string): string {
    return `${this.url}/webhooks/${name}`;
  }

  for(name: string): ReceivedCallback[] {
    return this.received.filter((r) => r.path === `/webhooks/${name}`);
  }

  async waitFor(name: string, count = 1, timeoutMs = 10_000): Promise<ReceivedCallback[]> {
    return eventually(async () => (this.for(name).length >= count ? this.for(name) : undefined), timeoutMs, 20);
  }

  close(): Promise<void> {
    this.server.closeAllConnections();
    return new Promise((resolve) => this.server.close(() => resolve()));
  }
}

/** The receiver's check, written independently of the sandbox code: HMAC over "<t>.<raw body>", |now - t| ≤ 300 s. */
export function signatureValid(cb: ReceivedCallback, secret = SECRET): boolean {
  const header = cb.headers['x-provider-signature'];
  if (typeof header !== 'string') return false;
  const m = /^t=(\d+),v1=([0-9a-f]{64})$/.exec(header);
  if (!m) return false;
  const t = Number(m[1]);
  if (Math.abs(Date.now() / 1000 - t) > 300) return false;
  const expected = createHmac('sha256', secret).update(`${m[1]}.${cb.raw}`).digest();
  return timingSafeEqual(expected, Buffer.from(m[2]!, 'hex'));
}

export interface Api {
  (method: string, path: string, body?: unknown, headers?: Record<string, string>): Promise<{ status: number; body: any; headers: Headers }>;
}

export function api(baseUrl: () => string): Api {
  return async (method, path, body, headers = {}) => {
    const res = await fetch(`${baseUrl()}${path}`, {
      method,
      headers: body === undefined ? headers : { 'content-type': 'application/json', ...headers },
      body: body === undefined ? undefined : typeof body === 'string' ? body : JSON.stringify(body),
    });
    const text = await res.text();
    let parsed: unknown = text;
    try {
      parsed = text ? JSON.parse(text) : undefined;
    } catch {
      /* not JSON */
    }
    return { status: res.status, body: parsed, headers: res.headers };
  };
}

let seq = 0;
/** A transaction id unique to this run. */
export function txId(label = 'tx'): string {
  seq += 1;
  return `${label}-${process.pid}-${Date.now().toString(36)}-${seq}`;
}

/** The body of one ACH submission to an account the sandbox pays (`o` overrides fields). */
export function achTransfer(transactionId: string, callbackUrl: string, o: Record<string, unknown> = {}) {
  return {
    transactionId,
    amountCents: 2_500_000,
    bankCode: '1007',
    accountTypeId: 20,
    accountNumber: '12345678901',
    documentTypeId: 1,
    documentNumber: '1020304050',
    holderName: 'ANA GOMEZ',
    callbackUrl,
    ...o,
  };
}

export const sleep = (ms: number) => new Promise((r) => setTimeout(r, ms));

/**
 * A Bre-B EMVCo QR as a participant issues one (the payer's side reads it: src/domain/emvco-qr.ts),
 * written here independently of any service: `01` 11 without a transaction id, 12 with one; `54` the
 * amount; `62`/05 the transaction id; template `80` the expiry (UTC YYYYMMDDHHMMSS); CRC16-CCITT in `63`.
 */
export function brebQrPayload(q: { keyValue: string; amountCents?: number; transactionId?: string; expiresAt?: Date; gui?: string }): string {
  const tlv = (tag: string, v: string) => `${tag}${String(v.length).padStart(2, '0')}${v}`;
  const stamp = (d: Date) => d.toISOString().slice(0, 19).replace(/[-T:]/g, '');
  const gui = q.gui ?? 'CO.BREB';
  const body =
    [
      tlv('00', '01'),
      tlv('01', q.transactionId ? '12' : '11'),
      tlv('26', tlv('00', gui) + tlv('01', q.keyValue)),
      tlv('52', '0000'),
      tlv('53', '170'),
      q.amountCents !== undefined ? tlv('54', (q.amountCents / 100).toFixed(2)) : '',
      tlv('58', 'CO'),
      tlv('59', 'FERRETERIA EL TORNILLO'),
      tlv('60', 'BOGOTA'),
      q.transactionId ? tlv('62', tlv('05', q.transactionId)) : '',
      q.expiresAt ? tlv('80', tlv('00', gui) + tlv('01', stamp(q.expiresAt))) : '',
    ].join('') + '6304';
  let crc = 0xffff;
  for (const b of Buffer.from(body, 'utf8')) {
    crc ^= b << 8;
    for (let i = 0; i < 8; i++) crc = crc & 0x8000 ? ((crc << 1) ^ 0x1021) & 0xffff : (crc << 1) & 0xffff;
  }
  return body + crc.toString(16).toUpperCase().padStart(4, '0');
}
