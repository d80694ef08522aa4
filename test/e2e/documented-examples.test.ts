import { startStack } from '../support/stack.js';

type Stack = Awaited<ReturnType<typeof startStack>>;

/**
 * The request examples GET /openapi.json shows (recorded from real answers by
 * `npm run openapi:examples`, gateway/src/openapi/examples.json) are requests the server accepts:
 * each creating operation of the client API is sent its documented example, as "Try it out" on
 * /docs sends it, by a fresh company with money on both rails, and must answer 2xx (and the answer
 * is checked against the document, as every answer of stack.http).
 */
const CREATING = [
  'resolveKey',
  'quoteBreb',
  'quoteAch',
  'sendTransfer',
  'createBatch',
  'createPseDeposit',
  'createCollectKey',
  'createCobro',
  'createCounterparty',
  'createWebhookEndpoint',
  'createWalletMove',
];

describe('documented request examples', () => {
  let stack: Stack;
  let co: Awaited<ReturnType<Stack['provision']>>;
  const operations = new Map<string, { method: string; path: string; example: unknown; csvExample?: string }>();

  beforeAll(async () => {
    stack = await startStack({ transfers: true, deposits: true, webhooks: true });
    co = await stack.provision('Ejemplos Documentados S.A.S.', { taxRegime: 'COMMON' });
    await stack.admin('PATCH', `/admin/companies/${co.id}`, { rateLimitMultiplier: 1000 });
    for (const rail of ['BREB', 'ACH'])
      expect(
        (await stack.admin('POST', `/admin/companies/${co.id}/wallets/${rail}/credit`, { amountCents: 50_000_000, reference: `seed-${rail}` })).status,
      ).toBe(201);
    const doc = (await stack.http('GET', '/openapi.json')).body;
    for (const [path, item] of Object.entries<Record<string, any>>(doc.paths)) {
      for (const [method, op] of Object.entries<any>(item)) {
        operations.set(op.operationId, {
          method: method.toUpperCase(),
          path,
          example: op.requestBody?.content?.['application/json']?.example,
          csvExample: op.requestBody?.content?.['text/csv']?.example,
        });
      }
    }
  }, 90_000);
  afterAll(async () => {
    await stack?.stop();
  });
  afterEach(async () => {
    expect((await stack.invariants()).violations).toEqual([]);
  });

  it.each(CREATING)('%s: the documented example is accepted (2xx)', async (operationId) => {
    const op = operations.get(operationId);
    expect(op).toBeDefined();
    expect(op!.path).not.toContain('{'); // sent as documented, no id to fill in
    expect(op!.example).toBeDefined();
    const r = await stack.http(op!.method, op!.path, { token: co.writeKey, body: op!.example });
    const accepted = r.status >= 200 && r.status < 300;
    expect({ operationId, status: accepted ? '2xx' : r.status, refusal: accepted ? undefined : r.body }).toEqual({
      operationId,
      status: '2xx',
      refusal: undefined,
    });
  });

  it('createBatchCsv: the documented file is a batch whose every line is a valid send (mode all: VALIDATED)', async () => {
    const op = operations.get('createBatchCsv')!;
    expect(typeof op.csvExample).toBe('string');
    const r = await stack.http(op.method, `${op.path}?reference=EJEMPLO-CSV&mode=all`, {
      token: co.writeKey,
      raw: { type: 'text/csv; charset=utf-8', data: op.csvExample! },
    });
    expect([r.status, r.body.status, r.body.validCount, r.body.invalidCount]).toEqual([201, 'VALIDATED', 4, 0]);
  });
});
