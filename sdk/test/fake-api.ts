import { createServer, type IncomingHttpHeaders, type ServerResponse } from 'node:http';
import type { AddressInfo } from 'node:net';

export interface Seen {
  method: string;
  path: string;
  query: URLSearchParams;
  headers: IncomingHttpHeaders;
  body: string;
}

/** What the fake answers: a status and JSON (or raw) body, or `hang` (never answers), or `drop` (cuts the connection). */
export type Reply = { status: number; json?: unknown; raw?: string | Buffer; type?: string; headers?: Record<string, string> } | 'hang' | 'drop';

/**
 * A real HTTP server on 127.0.0.1 that records every request and answers from a script, for the
 * client's retry, timeout, idempotency and paging logic (no mocked fetch: real sockets, real aborts).
 */
export async function startFakeApi(reply: (req: Seen, n: number) => Reply) {
  const seen: Seen[] = [];
  const hanging = new Set<ServerResponse>();
  const server = createServer((req, res) => {
    const chunks: Buffer[] = [];
    req.on('data', (c: Buffer) => chunks.push(c));
    req.on('end', () => {
      const url = new URL(req.url ?? '/', 'http://x');
      const s: Seen = {
        method: req.method ?? '',
        path: url.pathname,
        query: url.searchParams,
        headers: req.headers,
        body: Buffer.concat(chunks).toString('utf8'),
      };
      seen.push(s);
      const r = reply(s, seen.length);
      if (r === 'hang') {
        hanging.add(res);
        return;
      }
      if (r === 'drop') {
        req.socket.destroy();
        return;
      }
      const body = r.raw ?? (r.json === undefined ? '' : JSON.stringify(r.json));
      res.writeHead(r.status, { 'content-type': r.type ?? 'application/json', 'x-request-id': `req-${seen.length}`, ...r.headers });
      res.end(body);
    });
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  const url = `http://127.0.0.1:${(server.address() as AddressInfo).port}`;
  return {
    url,
    seen,
    async stop() {
      for (const res of hanging) res.socket?.destroy();
      server.closeAllConnections();
      await new Promise<void>((resolve) => server.close(() => resolve()));
    },
  };
}
