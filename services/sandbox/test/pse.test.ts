import { createTestDatabase, type TestDatabase } from '@wallet/platform/testing';
import { startSandbox } from '../src/testing.js';
import { CallbackReceiver, SECRET, api, signatureValid, sleep, txId } from './support.js';

describe('PSE gateway: links, pay page, outcomes and their signed callbacks', () => {
  let tdb: TestDatabase;
  let sandbox: Awaited<ReturnType<typeof startSandbox>>;
  let receiver: CallbackReceiver;
  const call = api(() => sandbox.url);
  const inOneHour = () => new Date(Date.now() + 3_600_000).toISOString();

  function link(name: string, over: Record<string, unknown> = {}) {
    return {
      depositId: txId(`dep_${name}`),
      amountCents: 123_456_789,
      companyName: 'Ferretería El Tornillo S.A.S.',
      payerName: 'María José Pérez',
      payerEmail: 'maria@example.com',
      description: 'Recarga de billetera',
      expiresAt: inOneHour(),
      callbackUrl: receiver.urlFor(name),
      ...over,
    };
  }
  async function create(name: string, over: Record<string, unknown> = {}) {
    const body = link(name, over);
    const r = await call('POST', '/pse/links', body);
    expect(r.status).toBe(201);
    return body;
  }
  async function page(depositId: string) {
    const res = await fetch(`${sandbox.url}/pse/pay/${depositId}`);
    return { status: res.status, html: await res.text(), headers: res.headers };
  }
  async function submit(depositId: string, fields: Record<string, string>) {
    const res = await fetch(`${sandbox.url}/pse/pay/${depositId}`, {
      method: 'POST',
      headers: { 'content-type': 'application/x-www-form-urlencoded', accept: 'text/html,application/xhtml+xml' },
      body: new URLSearchParams(fields).toString(),
    });
    return { status: res.status, html: await res.text() };
  }

  beforeAll(async () => {
    tdb = await createTestDatabase('sbx_pse');
    receiver = await CallbackReceiver.start();
    sandbox = await startSandbox({ databaseUrl: tdb.url, port: 0, env: { SANDBOX_CALLBACK_SECRET: SECRET, SANDBOX_POLL_MS: '50' } });
  });
  afterAll(async () => {
    await sandbox?.stop();
    await receiver?.close();
    await tdb?.drop();
  });
  afterEach(async () => {
    await call('POST', '/sandbox/faults', { pse: 'up' });
  });

  it('creates a link idempotently on depositId, with a pay URL on the sandbox', async () => {
    const body = link('create');
    const a = await call('POST', '/pse/links', body);
    expect(a.status).toBe(201);
    expect(a.body.linkId).toMatch(/^lnk_[0-9a-f]{24}$/);
    expect(a.body.paygatewayUrl).toBe(`${sandbox.url}/pse/pay/${body.depositId}`);
    const b = await call('POST', '/pse/links', body);
    expect(b.status).toBe(201);
    expect(b.body).toEqual(a.body);
    expect(b.headers.get('idempotent-replayed')).toBe('true');
    expect((await call('POST', '/pse/links', { ...body, amountCents: 5 })).status).toBe(409);
    expect((await call('POST', '/pse/links', { ...body, depositId: undefined })).status).toBe(400);
  });

  it('answers 502 PSE_PROVIDER_ERROR while the pse fault is down', async () => {
    await call('POST', '/sandbox/faults', { pse: 'down' });
    const r = await call('POST', '/pse/links', link('down'));
    expect(r.status).toBe(502);
    expect(r.body.error).toBe('PSE_PROVIDER_ERROR');
  });

  it('renders a pay page: amount in es-CO, escaped company name, banks, both buttons, strict CSP', async () => {
    const { depositId } = await create('page', { companyName: 'Acme <script>alert("x")</script> & Cía', payerName: 'Ana "Nena" O\'Neil' });
    const p = await page(depositId);
    expect(p.status).toBe(200);
    expect(p.headers.get('content-type')).toMatch(/^text\/html; charset=utf-8/);
    const csp = p.headers.get('content-security-policy') ?? '';
    expect(csp).toContain("default-src 'none'");
    expect(csp).not.toContain('unsafe-inline');
    expect(p.html).toContain('$ 1.234.567,89');
    expect(p.html).not.toContain('<script');
    expect(p.html).toContain('Acme &#60;script&#62;alert(&#34;x&#34;)&#60;/script&#62; &#38; Cía');
    expect(p.html).toContain('Ana &#34;Nena&#34; O&#39;Neil');
    for (const bank of ['Bancolombia', 'Banco de Bogotá', 'Davivienda', 'Nequi', 'Daviplata', 'Nu Colombia']) {
      expect(p.html).toContain(`<option value="${bank}">`);
    }
    expect(p.html).toMatch(/<button[^>]*value="pay"[^>]*>Pagar<\/button>/);
    expect(p.html).toMatch(/<button[^>]*value="reject"[^>]*>Rechazar<\/button>/);
    expect(p.html).toContain(`<form method="post" action="/pse/pay/${depositId}">`);
    const unknown = await page('dep_nope');
    expect(unknown.status).toBe(404);
    expect(unknown.html).toContain('no existe');
    expect(unknown.html).not.toContain('Pagar');
  });

  it('form pay → PAID, signed callback; the link then shows as paid and refuses another outcome', async () => {
    const { depositId } = await create('pay');
    const r = await submit(depositId, { action: 'pay', bank: 'Davivienda' });
    expect(r.status).toBe(200);
    expect(r.html).toContain('Pago aprobado');
    const [cb] = await receiver.waitFor('pay');
    expect(signatureValid(cb!)).toBe(true);
    expect(cb!.body).toMatchObject({ depositId, status: 'PAID', payerBank: 'Davivienda' });
    expect(cb!.body.eventId).toMatch(/^[0-9a-f-]{36}$/);
    expect(cb!.body.providerTransferId).toMatch(/^pse_[0-9a-f]{24}$/);
    expect(typeof cb!.body.paidAt).toBe('string');
    expect(typeof cb!.body.occurredAt).toBe('string');
    const again = await page(depositId);
    expect(again.html).toContain('ya fue realizado');
    expect(again.html).not.toContain('Pagar</button>');
    const twice = await call('POST', `/sandbox/pse/${depositId}/pay`, { outcome: 'REJECTED' });
    expect(twice.status).toBe(409);
    expect(twice.body.error).toBe('ALREADY_FINAL');
    const form = await submit(depositId, { action: 'reject' });
    expect(form.status).toBe(409);
    expect(form.html).not.toContain('Rechazar</button>');
  });

  it('form pay without a bank re-asks; reject → FAILED callback', async () => {
    const { depositId } = await create('reject');
    const noBank = await submit(depositId, { action: 'pay', bank: '' });
    expect(noBank.status).toBe(400);
    expect(noBank.html).toContain('Seleccione su banco');
    const r = await submit(depositId, { action: 'reject' });
    expect(r.status).toBe(200);
    expect(r.html).toContain('Pago rechazado');
    const [cb] = await receiver.waitFor('reject');
    expect(signatureValid(cb!)).toBe(true);
    expect(cb!.body).toMatchObject({ depositId, status: 'FAILED' });
    expect(cb!.body.paidAt).toBeUndefined();
  });

  it('scripted pay answers { status }; JSON clients of the form get JSON', async () => {
    const a = await create('scripted');
    const r = await call('POST', `/sandbox/pse/${a.depositId}/pay`, { outcome: 'APPROVED', payerBank: 'Bancolombia' });
    expect(r).toMatchObject({ status: 200, body: { status: 'PAID' } });
    const b = await create('scripted-json');
    const res = await fetch(`${sandbox.url}/pse/pay/${b.depositId}`, {
      method: 'POST',
      headers: { 'content-type': 'application/x-www-form-urlencoded', accept: 'application/json' },
      body: 'action=reject',
    });
    expect(res.status).toBe(200);
    expect(await res.json()).toEqual({ status: 'FAILED' });
    expect((await call('POST', '/sandbox/pse/dep_unknown/pay', { outcome: 'APPROVED' })).status).toBe(404);
    expect((await call('POST', `/sandbox/pse/${a.depositId}/pay`, { outcome: 'MAYBE' })).status).toBe(400);
  });

  it('an expired link says so, refuses payment with 409 LINK_EXPIRED and sends no callback', async () => {
    const { depositId } = await create('expired', { expiresAt: new Date(Date.now() + 300).toISOString() });
    await sleep(400);
    const p = await page(depositId);
    expect(p.status).toBe(200);
    expect(p.html).toContain('vencido');
    expect(p.html).not.toContain('Pagar</button>');
    const r = await call('POST', `/sandbox/pse/${depositId}/pay`, { outcome: 'APPROVED' });
    expect(r.status).toBe(409);
    expect(r.body.error).toBe('LINK_EXPIRED');
    const form = await submit(depositId, { action: 'pay', bank: 'Bancolombia' });
    expect(form.status).toBe(409);
    expect(form.html).toContain('vencido');
    await sleep(300);
    expect(receiver.for('expired')).toHaveLength(0);
  });

  it('reverse → REVERSED callback for a paid link (409 otherwise); redeliver sends the last one again', async () => {
    const { depositId } = await create('reverse');
    expect((await call('POST', `/sandbox/pse/${depositId}/reverse`)).status).toBe(409);
    expect((await call('POST', '/sandbox/pse/dep_unknown/reverse')).status).toBe(404);
    await call('POST', `/sandbox/pse/${depositId}/pay`, { outcome: 'APPROVED', payerBank: 'Nequi' });
    const [paid] = await receiver.waitFor('reverse');
    const r = await call('POST', `/sandbox/pse/${depositId}/reverse`);
    expect(r).toMatchObject({ status: 200, body: { status: 'REVERSED' } });
    const all = await receiver.waitFor('reverse', 2);
    const rev = all[1]!;
    expect(signatureValid(rev)).toBe(true);
    expect(rev.body).toMatchObject({ depositId, status: 'REVERSED', providerTransferId: paid!.body.providerTransferId, payerBank: 'Nequi' });
    expect(rev.body.eventId).not.toBe(paid!.body.eventId);
    expect((await call('POST', `/sandbox/pse/${depositId}/reverse`)).status).toBe(409);
    expect((await page(depositId)).html).toContain('Pago reversado');
    const re = await call('POST', `/sandbox/callbacks/${depositId}/redeliver`);
    expect(re).toMatchObject({ status: 200, body: { eventId: rev.body.eventId, delivered: true } });
    const three = await receiver.waitFor('reverse', 3);
    expect(three[2]!.raw).toBe(rev.raw);
    const pending = await create('reverse-pending');
    expect((await call('POST', `/sandbox/callbacks/${pending.depositId}/redeliver`)).status).toBe(409);
  });
});
