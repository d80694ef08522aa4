/**
 * Raw HTTP/1.1 over a loopback socket, for what fetch refuses to send: CR/LF and NUL in headers,
 * chunked bodies of a chosen size, lying Content-Length, and clients that trickle or stall.
 */
import net from 'node:net';

export interface RawResponse {
  /** undefined when the server closed without answering. */
  status: number | undefined;
  raw: string;
  /** The response headers (empty when the server closed without answering). */
  headers: Headers;
  /** The body after the header block (de-chunked when the answer was chunked). */
  body: string;
}

function parse(raw: string): RawResponse {
  const m = /^HTTP\/1\.[01] (\d{3})/.exec(raw);
  const at = raw.indexOf('\r\n\r\n');
  const headers = new Headers();
  for (const line of (at >= 0 ? raw.slice(0, at) : '').split('\r\n').slice(1)) {
    const colon = line.indexOf(':');
    if (colon > 0) {
      try {
        headers.append(line.slice(0, colon).trim(), line.slice(colon + 1).trim());
      } catch {
        /* not a valid header: left out */
      }
    }
  }
  let body = at >= 0 ? raw.slice(at + 4) : '';
  if (/\r\ntransfer-encoding:\s*chunked/i.test(raw.slice(0, at))) {
    // De-chunk (enough for small error bodies).
    let out = '';
    let rest = body;
    for (;;) {
      const nl = rest.indexOf('\r\n');
      if (nl < 0) break;
      const size = parseInt(rest.slice(0, nl), 16);
      if (!size) break;
      out += rest.slice(nl + 2, nl + 2 + size);
      rest = rest.slice(nl + 2 + size + 2);
    }
    body = out;
  }
  return { status: m ? Number(m[1]) : undefined, raw, headers, body };
}

/**
 * Writes `head` (and optionally `chunks` × `chunkBytes` of body: chunked framing when the head says
 * so) and reads until the server closes or `timeoutMs` passes.
 */
export function rawRequest(
  port: number,
  head: string,
  opts: { chunks?: number; chunkBytes?: number; tail?: string; tolerateReset?: boolean; timeoutMs?: number } = {},
): Promise<RawResponse> {
  return new Promise((resolve, reject) => {
    const socket = net.connect(port, '127.0.0.1');
    const received: Buffer[] = [];
    let settled = false;
    const finish = (err?: Error) => {
      if (settled) return;
      settled = true;
      clearTimeout(timer);
      socket.destroy();
      const text = Buffer.concat(received).toString('latin1');
      if (err && !(opts.tolerateReset && text) && !text) reject(err);
      else resolve(parse(text));
    };
    const timer = setTimeout(() => finish(new Error('raw request: no answer in time')), opts.timeoutMs ?? 15_000);
    socket.on('data', (d) => received.push(d));
    socket.on('end', () => finish());
    socket.on('close', () => finish());
    // A write can fail (EPIPE) once the server has answered and closed: keep what was read.
    socket.on('error', (err) => (opts.tolerateReset ? setTimeout(() => finish(received.length ? undefined : err), 50) : finish(err)));
    socket.on('connect', async () => {
      socket.write(Buffer.from(head, 'latin1'));
      const chunked = /\r\ntransfer-encoding:\s*chunked/i.test(head);
      const chunk = Buffer.alloc(opts.chunkBytes ?? 0, 'a');
      // Stop sending as soon as the server answers.
      for (let i = 0; i < (opts.chunks ?? 0) && !socket.destroyed && !settled && received.length === 0; i++) {
        const ok = chunked ? socket.write(`${chunk.length.toString(16)}\r\n`) && socket.write(chunk) && socket.write('\r\n') : socket.write(chunk);
        if (!ok) await new Promise((r) => socket.once('drain', r));
      }
      if (opts.tail && !socket.destroyed && !settled && received.length === 0) socket.write(opts.tail);
      if (chunked && !socket.destroyed && !settled && received.length === 0) socket.write('0\r\n\r\n');
    });
  });
}

export interface SlowClient {
  /** What the client sent before stalling (empty for 'idle'). */
  head: string;
  /** Resolves when the connection ends: whether the server closed it, and any answer it gave. */
  closed: Promise<{ closedByServer: boolean; status: number | undefined; response: RawResponse }>;
  destroy(): void;
}

/**
 * A client that never finishes its request: 'headers' sends a header line every second and never
 * the blank line (slowloris), 'body' sends complete headers and then one body byte a second,
 * 'idle' connects and sends nothing.
 */
export function slowClient(port: number, mode: 'headers' | 'body' | 'idle'): SlowClient {
  const socket = net.connect(port, '127.0.0.1');
  const received: Buffer[] = [];
  let destroyedByUs = false;
  let timer: NodeJS.Timeout | undefined;
  const head =
    mode === 'headers'
      ? 'GET /openapi.json HTTP/1.1\r\nHost: x\r\n'
      : mode === 'body'
        ? 'POST /webhooks/pse HTTP/1.1\r\nHost: x\r\nContent-Type: application/json\r\nContent-Length: 100000\r\n\r\n{'
        : '';
  const closed = new Promise<{ closedByServer: boolean; status: number | undefined; response: RawResponse }>((resolve) => {
    socket.on('data', (d) => received.push(d));
    socket.on('error', () => undefined);
    socket.on('close', () => {
      if (timer) clearInterval(timer);
      const response = parse(Buffer.concat(received).toString('latin1'));
      resolve({ closedByServer: !destroyedByUs, status: response.status, response });
    });
  });
  socket.on('connect', () => {
    if (mode === 'idle') return;
    if (mode === 'headers') {
      socket.write(head);
      timer = setInterval(() => {
        if (!socket.destroyed) socket.write(`X-Slow-${Date.now()}: 1\r\n`);
      }, 1000);
    } else {
      socket.write(head);
      timer = setInterval(() => {
        if (!socket.destroyed) socket.write(' ');
      }, 1000);
    }
  });
  return {
    head,
    closed,
    destroy() {
      destroyedByUs = true;
      if (timer) clearInterval(timer);
      socket.destroy();
    },
  };
}
