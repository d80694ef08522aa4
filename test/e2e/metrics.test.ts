import { readFileSync } from 'node:fs';
import { eventually } from '@wallet/platform/testing';
import { startStack } from '../support/stack.js';

type Stack = Awaited<ReturnType<typeof startStack>>;

/**
 * Prometheus metrics after real traffic, read from the ops server's /metrics (in this test every
 * service runs in one process and shares one registry, as each would in its own process).
 * The names are the ones the Grafana dashboard (deploy/grafana/wallet-overview.json) queries.
 */
describe('metrics end to end', () => {
  let stack: Stack;
  let co: Awaited<ReturnType<Stack['provision']>>;

  beforeAll(async () => {
    stack = await startStack({ transfers: true, deposits: true, receipts: true, gatewayEnv: { RATE_LIMIT_QUOTES: '2' } });
    co = await stack.provision('Métricas S.A.S.', { taxRegime: 'COMMON' });
    await stack.admin('POST', `/admin/companies/${co.id}/wallets/ACH/credit`, { amountCents: 10_000_000, reference: 'seed-metrics' });
  }, 90_000);
  afterAll(async () => {
    await stack?.stop();
  });

  const scrape = async () => {
    const r = await fetch(`${stack.gateway.opsUrl}/metrics`);
    expect(r.status).toBe(200);
    expect(r.headers.get('content-type')).toMatch(/^text\/plain/);
    return r.text();
  };
  /** The value of one series (exact label set, in the order prom-client writes them). */
  const value = (text: string, series: string) => {
    const line = text.split('\n').find((l) => l.startsWith(`${series} `));
    return line === undefined ? undefined : Number(line.slice(series.length + 1));
  };

  it('RED per route and RPC, business counters, saga states, outbox and consumer lag, rate-limit rejections', async () => {
    const send = await stack.http('POST', '/transfers/send', {
      token: co.writeKey,
      body: {
        amount: 300_000,
        description: 'Métricas',
        destination: {
          bankAccount: {
            bankId: 1,
            accountTypeId: 20,
            accountNumber: '12345678901',
            documentTypeId: 1,
            documentNumber: '1020304050',
            holderFirstName: 'Ana',
            holderLastName: 'Pérez',
          },
        },
      },
    });
    expect(send.status).toBe(201);
    const transferId = send.body.id as string;
    const final = await eventually(
      async () => {
        const r = await stack.http('GET', `/wallets/transactions/${transferId}`, { token: co.readKey });
        return ['COMPLETED', 'FAILED'].includes(r.body?.status) ? (r.body.status as string) : undefined;
      },
      20_000,
      100,
    );

    const dep = await stack.http('POST', '/deposits/pse', {
      token: co.writeKey,
      body: {
        amountCents: 2_000_000,
        payerDocumentTypeId: 1,
        payerDocumentNumber: '52123456',
        payerFirstName: 'Marta',
        payerLastName: 'Ríos',
        payerEmail: 'marta@example.com',
      },
    });
    expect(dep.status).toBe(201);

    // QUOTES is limited to 2 a minute here: the third answer is a 429.
    const quote = () => stack.http('POST', '/transfers/quote', { token: co.writeKey, body: { amount: 1_000, keyValue: '3001234567', keyType: 'PHONE' } });
    const statuses = [(await quote()).status, (await quote()).status, (await quote()).status];
    expect(statuses[2]).toBe(429);

    // The receipt consumer has caught up with the transfer's events.
    const text = await eventually(
      async () => {
        const t = await scrape();
        return value(t, 'nats_consumer_pending_messages{stream="TRANSFERS",consumer="receipt-transfers"}') === 0 &&
          (value(t, `wallet_sends_total{rail="ACH",status="${final}"}`) ?? 0) >= 1
          ? t
          : undefined;
      },
      20_000,
      200,
    );

    // RED per route template and method (never raw paths or ids).
    expect(value(text, 'http_server_requests_total{method="POST",route="/transfers/send",status="201"}')).toBeGreaterThanOrEqual(1);
    expect(value(text, 'http_server_requests_total{method="GET",route="/wallets/transactions/{id}",status="200"}')).toBeGreaterThanOrEqual(1);
    expect(value(text, 'http_server_request_duration_seconds_count{method="POST",route="/transfers/send",status="201"}')).toBeGreaterThanOrEqual(1);
    expect(text).not.toContain(transferId);
    expect(text).not.toContain(co.id);
    // RED per RPC (server side), by outcome.
    expect(value(text, 'grpc_server_handled_total{service="wallet.transfer.v1.TransferService",method="Send",code="OK"}')).toBeGreaterThanOrEqual(1);
    expect(value(text, 'grpc_server_handling_seconds_count{service="wallet.transfer.v1.TransferService",method="Send",code="OK"}')).toBeGreaterThanOrEqual(1);
    expect(text).toMatch(/grpc_server_handled_total\{service="wallet\.ledger\.v1\.LedgerService",method="[A-Za-z]+",code="OK"\} [1-9]/);
    // Business counters: sends by rail and state reached, deposits by source and status.
    expect(value(text, 'wallet_sends_total{rail="ACH",status="RECEIVED"}')).toBeGreaterThanOrEqual(1);
    expect(value(text, 'wallet_sends_total{rail="ACH",status="RESERVED"}')).toBeGreaterThanOrEqual(1);
    expect(value(text, `wallet_sends_total{rail="ACH",status="${final}"}`)).toBeGreaterThanOrEqual(1);
    expect(value(text, `wallet_deposits_total{source="PSE",status="${dep.body.status}"}`)).toBeGreaterThanOrEqual(1);
    // Saga states: the transfer is final, so no live saga is left in DISPATCHED.
    expect(value(text, 'wallet_transfer_saga_transfers{state="DISPATCHED"}')).toBe(0);
    expect(value(text, 'wallet_transfer_saga_transfers{state="RECEIVED"}')).toBe(0);
    // Outbox: everything committed was relayed.
    expect(value(text, 'outbox_pending_events{schema="transfer"}')).toBe(0);
    expect(value(text, 'outbox_lag_seconds{schema="transfer"}')).toBe(0);
    expect(value(text, 'outbox_published_total{schema="transfer"}')).toBeGreaterThanOrEqual(2);
    // Consumers: lag, acks pending, handled messages.
    expect(value(text, 'nats_consumer_ack_pending_messages{stream="TRANSFERS",consumer="receipt-transfers"}')).toBe(0);
    expect(value(text, 'nats_consumer_messages_total{consumer="receipt-transfers",outcome="applied"}')).toBeGreaterThanOrEqual(2);
    expect(text).toContain('nats_consumer_redeliveries_total');
    // Rate-limit rejections by class.
    expect(value(text, 'gateway_rate_limit_rejections_total{class="QUOTES"}')).toBe(1);
  });

  it('the Grafana dashboard queries only metrics the processes export', async () => {
    const dashboard = JSON.parse(readFileSync(new URL('../../deploy/grafana/wallet-overview.json', import.meta.url), 'utf8')) as {
      panels: Array<{ type: string; targets?: Array<{ expr: string }> }>;
    };
    const exprs = dashboard.panels.flatMap((p) => p.targets ?? []).map((t) => t.expr);
    expect(exprs.length).toBeGreaterThan(20);
    const text = await scrape();
    const exported = new Set(
      [...text.matchAll(/^# TYPE (\S+) (\S+)$/gm)].flatMap(([, name, type]) =>
        type === 'histogram' ? [`${name}_bucket`, `${name}_count`, `${name}_sum`] : [name!],
      ),
    );
    const functions = new Set(['histogram_quantile', 'clamp_min', 'clamp_max', 'label_replace']);
    const used = new Set(exprs.flatMap((e) => [...e.matchAll(/\b([a-z][a-z0-9]*_[a-z0-9_]+)\b/g)].map((m) => m[1]!)).filter((n) => !functions.has(n)));
    expect(used.size).toBeGreaterThan(15);
    for (const name of used) expect([name, exported.has(name)]).toEqual([name, true]);
  });
});
