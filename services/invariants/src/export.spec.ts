import { createServer, type IncomingMessage } from 'node:http';
import type { AddressInfo } from 'node:net';
import { LEDGER_CHECK_METRICS, ledgerCheckRegistry, pushLedgerCheck } from './export.js';
import { CHECK_NAMES, type InvariantReport } from './report.js';

const at = new Date('2026-11-29T03:00:00Z');
const report = (violated: Partial<Record<string, number>> = {}): InvariantReport => ({
  ok: Object.values(violated).every((n) => !n),
  at,
  rail: null,
  checks: CHECK_NAMES.map((name) => ({
    name,
    counts: [],
    violations: [],
    total: violated[name] ?? 0,
    notChecked: name === 'clearing' ? ['no reconciliation'] : [],
  })),
  exceptions: [],
});

/** A Pushgateway stand-in on loopback that records what it was sent (method, path, body). */
async function gateway(status = 200) {
  const got: Array<{ method: string; path: string; type: string; body: string }> = [];
  const server = createServer((req: IncomingMessage, res) => {
    let body = '';
    req.on('data', (c) => (body += c));
    req.on('end', () => {
      got.push({ method: req.method!, path: req.url!, type: String(req.headers['content-type']), body });
      res.writeHead(status).end(status === 200 ? '' : 'bad push');
    });
  });
  await new Promise<void>((r) => server.listen(0, '127.0.0.1', r));
  return { url: `http://127.0.0.1:${(server.address() as AddressInfo).port}/`, got, close: () => new Promise((r) => server.close(r)) };
}

describe('ledger:check result as metrics', () => {
  it('exports every family, violated or not, and the run figures', async () => {
    const text = await ledgerCheckRegistry({ report: report({ holds: 2 }), durationSeconds: 1.5 }).metrics();
    for (const name of CHECK_NAMES) expect(text).toContain(`wallet_ledger_check_violations{check="${name}"} ${name === 'holds' ? 2 : 0}`);
    expect(text).toContain('wallet_ledger_check_not_checked{check="clearing"} 1');
    expect(text).toContain('wallet_ledger_check_ok 0');
    expect(text).toContain(`wallet_ledger_check_last_completed_timestamp_seconds ${at.getTime() / 1000}`);
    expect(text).toContain('wallet_ledger_check_last_run_completed 1');
    for (const name of LEDGER_CHECK_METRICS) expect(text).toContain(`# TYPE ${name} gauge`);
  });

  it('a run that could not read the installation says only that', async () => {
    const text = await ledgerCheckRegistry({ error: 'connection refused', durationSeconds: 0.2, at }).metrics();
    expect(text).toContain('wallet_ledger_check_last_run_completed 0');
    expect(text).not.toContain('wallet_ledger_check_violations');
    expect(text).not.toContain('wallet_ledger_check_last_completed_timestamp_seconds');
  });

  it('pushes a completed run with PUT (the whole group) and a failed one with POST (its run figures only)', async () => {
    const gw = await gateway();
    try {
      await pushLedgerCheck(gw.url, 'wallet ledger/check', { report: report(), durationSeconds: 1 });
      await pushLedgerCheck(gw.url, 'wallet ledger/check', { error: 'timeout', durationSeconds: 1 });
      expect(gw.got.map((g) => `${g.method} ${g.path}`)).toEqual(['PUT /metrics/job/wallet%20ledger%2Fcheck', 'POST /metrics/job/wallet%20ledger%2Fcheck']);
      expect(gw.got[0]!.type).toMatch(/^text\/plain; version=0\.0\.4/);
      expect(gw.got[0]!.body).toContain('wallet_ledger_check_ok 1');
      expect(gw.got[1]!.body).not.toContain('wallet_ledger_check_ok');
    } finally {
      await gw.close();
    }
  });

  it('a Pushgateway that refuses the push is an error', async () => {
    const gw = await gateway(400);
    try {
      await expect(pushLedgerCheck(gw.url, 'j', { report: report(), durationSeconds: 1 })).rejects.toThrow(/answered 400 bad push/);
    } finally {
      await gw.close();
    }
  });
});
