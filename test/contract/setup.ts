/**
 * The stack the contract fuzzer drives: every service an API key or the admin token reaches
 * (transfers and rails, PSE deposits, collect keys, receipts, outgoing webhooks), a company with
 * money and lifted limits whose WRITE key the fuzzer uses, another company for the admin routes to
 * act on (so the fuzzer never revokes its own key or suspends its own company), a loopback sink for
 * webhook deliveries, and a few real resources so path parameters can hit something that exists.
 */
import http from 'node:http';
import type net from 'node:net';
import { startStack } from '../support/stack.js';
import { servedDocument } from '../support/openapi-check.js';
import type { FuzzTarget } from './fuzzer.js';
import { PSE_PAYER } from '../support/fixtures.js';

type Stack = Awaited<ReturnType<typeof startStack>>;

/** Every rate class lifted: the fuzzer measures the contract, not the limits (429s are still counted). */
const LIFTED_LIMITS = Object.fromEntries(
  [
    'RATE_LIMIT_READS',
    'RATE_LIMIT_QUOTES',
    'RATE_LIMIT_RESOLVE_KEY',
    'RATE_LIMIT_FINANCIAL',
    'RATE_LIMIT_COLLECT_KEY_WRITES',
    'RATE_LIMIT_AUTHENTICATION',
    'RATE_LIMIT_ADMIN',
    'RATE_LIMIT_ADMIN_LOGIN',
  ].map((k) => [k, '1000000']),
);

/**
 * The providers' time-outs lifted too, and the gateway's deadline on its calls to the services. The whole stack is one process: a receipt's PDF or a statement drawn by
 * the fuzzer holds the one event loop every service shares, and on a loaded machine (CI runs this suite beside
 * the services' suites) a provider call's timer fired before its answer was read: the fuzzer counted the 503s
 * (shareDepositByEmail's SMTP, createCollectKey's and createCobro's directory call). A provider that does not
 * answer in time is tested where it is the subject (the fault suite, the services' own suites).
 */
const PATIENT_PROVIDERS = { PROVIDER_HTTP_TIMEOUT_MS: '60000' };

export interface FuzzStack {
  stack: Stack;
  target: FuzzTarget;
  stop(): Promise<void>;
}

export async function startFuzzStack(): Promise<FuzzStack> {
  // Webhook deliveries land here (loopback only): 200 to everything.
  const sink = http.createServer((req, res) => {
    req.resume();
    req.on('end', () => res.writeHead(200, { 'content-type': 'text/plain' }).end('ok'));
  });
  await new Promise<void>((resolve) => sink.listen(0, '127.0.0.1', resolve));
  const sinkPort = (sink.address() as net.AddressInfo).port;

  // CONTRACT_FUZZ_LOGS=<level> (e.g. error) keeps every process's log lines at that level for the report: the cause of a 5xx.
  const stack = await startStack({
    transfers: true,
    deposits: true,
    collectKeys: true,
    receipts: true,
    webhooks: true,
    gatewayEnv: { ...LIFTED_LIMITS, GRPC_DEADLINE_MS: '60000' },
    transferEnv: PATIENT_PROVIDERS,
    collectKeyEnv: PATIENT_PROVIDERS,
    depositEnv: { ...PATIENT_PROVIDERS, SMTP_TIMEOUT_MS: '60000' },
    ...(process.env.CONTRACT_FUZZ_LOGS ? { captureLogs: process.env.CONTRACT_FUZZ_LOGS } : {}),
  });
  try {
    const co = await stack.provision('Contrato Fuzz S.A.S.', { taxRegime: 'COMMON' });
    const other = await stack.provision('Objetivo Admin S.A.S.', { taxRegime: 'SIMPLE' });
    await stack.admin('PATCH', `/admin/companies/${co.id}`, { rateLimitMultiplier: 1000 });
    for (const rail of ['BREB', 'ACH'])
      await stack.admin('POST', `/admin/companies/${co.id}/wallets/${rail}/credit`, { amountCents: 1_000_000_000_000, reference: `fuzz-${rail}` });

    // A few real resources, made as an integrator would (each answer is checked against the document too).
    const seeds: Record<string, string[]> = { '/admin/companies': [other.id], '/wallets/transactions': [], '/deposits': [], '/breb/collect-keys': [] };
    const post = (path: string, body: unknown) => stack.http('POST', path, { token: co.writeKey, body });
    const hook = await post('/webhooks/endpoints', { url: `http://127.0.0.1:${sinkPort}/seed`, events: ['transfer.completed'] });
    if (hook.status === 201) seeds['/webhooks/endpoints'] = [hook.body.id];
    const key = await post('/breb/collect-keys', { externalId: 'fuzz-seed', name: 'Semilla' });
    if (key.status === 201) seeds['/breb/collect-keys']!.push(key.body.id);
    const resolved = await post('/transfers/resolve-key', { keyValue: '3001234567' });
    if (resolved.status === 200) {
      const sent = await post('/transfers/send', {
        amount: 100_000,
        destination: { brebKey: { type: resolved.body.keyType, value: resolved.body.keyValue } },
        targetName: resolved.body.recipient.fullName,
        targetDocument: resolved.body.recipient.idValue,
      });
      if (sent.status === 201) seeds['/wallets/transactions']!.push(sent.body.id);
    }
    const pse = await post('/deposits/pse', {
      amountCents: 500_000,
      ...PSE_PAYER,
    });
    if (pse.status === 201) seeds['/deposits']!.push(pse.body.id);

    const target: FuzzTarget = {
      baseUrl: stack.gateway.url,
      responses: await servedDocument(stack.gateway.url),
      credentials: { apiKey: co.writeKey, adminToken: stack.gateway.adminToken },
      urlBase: `http://127.0.0.1:${sinkPort}/hook`,
      seeds,
    };
    return {
      stack,
      target,
      async stop() {
        await stack.stop();
        sink.closeAllConnections();
        await new Promise<void>((resolve) => sink.close(() => resolve()));
      },
    };
  } catch (e) {
    await stack.stop();
    sink.close();
    throw e;
  }
}
