import { createServer, type Server } from 'node:http';
import type { Logger } from 'pino';
import { metricsRegistry } from './metrics.js';
import { withTimeout } from '../time/with-timeout.js';

export type ReadinessCheck = { name: string; check: () => Promise<void> };

/**
 * /healthz (the process is alive), /readyz (its dependencies answer; 503 with the failing ones
 * named), /metrics (Prometheus). A separate port from the public traffic.
 */
export class OpsServer {
  private server: Server | undefined;
  private draining = false;
  constructor(
    private readonly checks: ReadinessCheck[],
    private readonly log: Logger,
  ) {}

  /** Readiness fails from now on, so load balancers stop sending work during shutdown. */
  drain(): void {
    this.draining = true;
  }

  async readiness(): Promise<{ ready: boolean; checks: Record<string, string> }> {
    const results: Record<string, string> = {};
    await Promise.all(
      this.checks.map(async (c) => {
        try {
          await withTimeout(c.check(), 2000);
          results[c.name] = 'ok';
        } catch (err) {
          results[c.name] = `fail: ${(err as Error).message}`;
        }
      }),
    );
    const ready = !this.draining && Object.values(results).every((v) => v === 'ok');
    if (this.draining) results.shutdown = 'draining';
    return { ready, checks: results };
  }

  async listen(port: number, host = '0.0.0.0'): Promise<number> {
    this.server = createServer((req, res) => {
      const url = req.url ?? '/';
      if (url === '/healthz') {
        res.writeHead(200, { 'content-type': 'application/json' }).end('{"status":"ok"}');
      } else if (url === '/readyz') {
        this.readiness().then(
          ({ ready, checks }) => {
            res.writeHead(ready ? 200 : 503, { 'content-type': 'application/json' }).end(JSON.stringify({ status: ready ? 'ready' : 'not_ready', checks }));
          },
          () => res.writeHead(503).end(),
        );
      } else if (url === '/metrics') {
        metricsRegistry.metrics().then(
          (body) => {
            res.writeHead(200, { 'content-type': metricsRegistry.contentType }).end(body);
          },
          (err) => {
            this.log.error({ err }, 'metrics failed');
            res.writeHead(500).end();
          },
        );
      } else {
        res.writeHead(404, { 'content-type': 'application/json' }).end('{"error":"ROUTE_NOT_FOUND"}');
      }
    });
    await new Promise<void>((resolve) => this.server!.listen(port, host, resolve));
    const addr = this.server.address();
    return typeof addr === 'object' && addr ? addr.port : port;
  }

  async close(): Promise<void> {
    if (!this.server) return;
    await new Promise<void>((resolve) => this.server!.close(() => resolve()));
  }
}
