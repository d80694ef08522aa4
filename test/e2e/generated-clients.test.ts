import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { startStack } from '../support/stack.js';
import { TOOLS, compile, generate, layOut, runFlow, type Step, type Tool } from '../generators/toolchain.js';

type Stack = Awaited<ReturnType<typeof startStack>>;
type Doc = { servers: { url: string }[]; components: { schemas: Record<string, { properties: Record<string, unknown>; required: string[] }> } };

/**
 * The three mainstream generators stay green on the served document: openapi-typescript 7 +
 * openapi-fetch, @hey-api/openapi-ts (its default fetch client) and orval (its default axios
 * client), each run with default options on GET /openapi.json; a hand-written integrator flow per
 * generator (test/generators/<tool>/flow.ts) compiles against the output with tsc in strict mode
 * and then runs, as its own process, against this stack: balance → resolve → quote → send (BREB by
 * key) → the transfer until final → movements page by page → PSE deposit link → collect key.
 * A document change that breaks a generator's output or the flow fails here.
 */
describe('generated clients compile and run a flow', () => {
  let stack: Stack;
  let doc: Doc;
  let base: string;
  const built = new Map<Tool, { dir: string; generated: Step; compiled: Step }>();

  beforeAll(async () => {
    stack = await startStack({ transfers: true, deposits: true });
    // The document as an integrator downloads it.
    const res = await fetch(`${stack.gateway.url}/openapi.json`);
    expect(res.status).toBe(200);
    doc = (await res.json()) as Doc;
    base = mkdtempSync(join(tmpdir(), 'generated-clients-'));
    const docPath = join(base, 'openapi.json');
    writeFileSync(docPath, JSON.stringify(doc));
    await Promise.all(
      TOOLS.map(async (tool) => {
        const dir = join(base, tool);
        layOut(tool, dir);
        const generated = await generate(tool, dir, docPath);
        const compiled = generated.ok ? await compile(dir) : { ok: false, ms: 0, output: 'not generated' };
        built.set(tool, { dir, generated, compiled });
      }),
    );
  }, 600_000);
  afterAll(async () => {
    await stack?.stop();
    if (base) rmSync(base, { recursive: true, force: true });
  });

  it.each(TOOLS)(
    '%s: default output + the flow compile in strict mode, and the flow runs to a COMPLETED send',
    async (tool) => {
      const b = built.get(tool)!;
      expect(b.generated.ok ? '' : b.generated.output).toBe('');
      expect(b.compiled.output.trim()).toBe(''); // tsc's diagnostics, if any, name file, line and code
      expect(b.compiled.ok).toBe(true);

      const co = await stack.provision(`Integrador ${tool} S.A.S.`);
      await stack.admin('PATCH', `/admin/companies/${co.id}`, { rateLimitMultiplier: 1000 });
      expect((await stack.admin('POST', `/admin/companies/${co.id}/wallets/BREB/credit`, { amountCents: 5_000_000, reference: 'seed-breb' })).status).toBe(201);
      // More movements than one page holds (default 20), so the flow has to follow nextCursor.
      for (let i = 0; i < 21; i++) {
        const c = await stack.admin('POST', `/admin/companies/${co.id}/wallets/ACH/credit`, { amountCents: 1_000 + i, reference: `seed-ach-${i}` });
        expect(c.status).toBe(201);
      }

      const { step, report } = await runFlow(b.dir, {
        baseUrl: stack.gateway.url,
        apiKey: co.writeKey,
        keyValue: '3001234567',
        amount: 250_000,
        runId: `gen-${tool}-${Date.now()}`,
      });
      expect(step.ok ? '' : step.output).toBe('');
      expect(report).toMatchObject({ finalStatus: 'COMPLETED', availableBrebCents: '5000000', paygatewayUrl: expect.stringMatching(/^https?:\/\//) });
      expect(report!.quoteTotalCost).toBeGreaterThanOrEqual(250_000);
      expect(report!.collectKeyValue).toMatch(/^@[a-z0-9]{10}$/);
      expect(report!.pages).toBeGreaterThan(1);
      expect(report!.movementIds).toContain(report!.transferId);
      expect(new Set(report!.movementIds).size).toBe(report!.movementIds.length); // no movement twice across pages
      // hey-api's client found its base URL in the document's `servers` (nothing set by hand).
      if (tool === 'hey-api') expect(report!.baseUrlUsed).toBe(doc.servers[0]!.url);

      // What the server holds, read through the documented-answer check.
      const tx = await stack.http('GET', `/wallets/transactions/${report!.transferId}`, { token: co.readKey });
      expect(tx.body).toMatchObject({ id: report!.transferId, status: 'COMPLETED', type: 'TRANSFER_OUT', rail: 'BREB' });
      expect((await stack.invariants()).violations).toEqual([]);
    },
    180_000,
  );

  // Not vacuous: the same generation and compile fail when the document changes in a way the flow
  // depends on. Both plants go into one document (tsc reports every error, so one generation and
  // one compile prove both), with openapi-typescript: the fastest of the three.
  it('fails on a planted breaking change: a request field made required, a response field renamed', async () => {
    const planted = structuredClone(doc);
    // An optional request field becomes required: the flow's POST /breb/collect-keys omits it.
    planted.components.schemas.CreateCollectKeyRequest!.required.push('keyValue');
    // A required response field is renamed: the flow follows MovementPage.nextCursor.
    const page = planted.components.schemas.MovementPage!;
    page.properties.next = page.properties.nextCursor;
    delete page.properties.nextCursor;
    page.required = page.required.map((p) => (p === 'nextCursor' ? 'next' : p));

    const dir = join(base, 'planted');
    layOut('openapi-typescript', dir);
    const docPath = join(dir, 'openapi.json');
    writeFileSync(docPath, JSON.stringify(planted));
    const generated = await generate('openapi-typescript', dir, docPath);
    expect(generated.ok ? '' : generated.output).toBe('');
    const compiled = await compile(dir);
    expect(compiled.ok).toBe(false);
    expect(compiled.output).toMatch(/flow\.ts\(\d+,\d+\): error TS\d+:[^\n]*(?:\n [^\n]*)*keyValue/);
    expect(compiled.output).toMatch(/flow\.ts\(\d+,\d+\): error TS\d+:[^\n]*(?:\n [^\n]*)*nextCursor/);
    // Nothing else broke: every diagnostic is in the flow, none in the generated code.
    expect(compiled.output.split('\n').filter((l) => / error TS\d+/.test(l) && !l.startsWith('flow.ts('))).toEqual([]);
  }, 300_000);
});
