// What `npm run test:images` proves through the running containers: every process ready, then,
// through the gateway only (and the sandbox as the payer and the providers), a company with API
// keys, a credit, a Bre-B send that reaches COMPLETED, a PSE link opened and paid (the deposit
// ASSIGNED, its net credited), the PDF receipt of the send, and today's Bre-B and PSE reports
// reconciled by the reconciliation container (each RECONCILED, every line matched, no break).
const sleep = (ms) => new Promise((r) => setTimeout(r, ms));

async function call(base, method, path, { token, body } = {}) {
  const headers = {};
  if (token) headers.authorization = `Bearer ${token}`;
  if (body !== undefined) headers['content-type'] = 'application/json';
  const res = await fetch(base + path, { method, headers, body: body === undefined ? undefined : JSON.stringify(body), signal: AbortSignal.timeout(15_000) });
  const buf = Buffer.from(await res.arrayBuffer());
  let json;
  try {
    json = JSON.parse(buf.toString('utf8'));
  } catch {
    json = undefined;
  }
  return { status: res.status, headers: res.headers, body: json, buf };
}

async function eventually(what, fn, timeoutMs = 30_000) {
  const until = Date.now() + timeoutMs;
  let last;
  for (;;) {
    try {
      last = await fn();
      if (last?.ok) return last.value;
    } catch (err) {
      last = { why: String(err) };
    }
    if (Date.now() > until) throw new Error(`${what}: not after ${timeoutMs / 1000} s (last: ${JSON.stringify(last?.why ?? last).slice(0, 400)})`);
    await sleep(500);
  }
}

function expect(cond, what, detail) {
  if (!cond) throw new Error(`${what}${detail === undefined ? '' : `: ${typeof detail === 'string' ? detail : JSON.stringify(detail).slice(0, 600)}`}`);
}

/** `ready`: [{ name, url }] of every process's /readyz; `gateway`, `sandbox`: base URLs. */
export async function provePipeline({ ready, gateway, sandbox, adminToken, say }) {
  const steps = [];
  const step = async (name, fn) => {
    const t = Date.now();
    const detail = await fn();
    steps.push({ name, ms: Date.now() - t, detail });
    say(`ok  ${name}${detail ? ` (${detail})` : ''} [${Date.now() - t} ms]`);
  };

  for (const r of ready) {
    await step(`${r.name} /readyz`, () =>
      eventually(
        `${r.name} ready`,
        async () => {
          const res = await fetch(r.url, { signal: AbortSignal.timeout(3000) });
          return { ok: res.status === 200, why: res.status };
        },
        60_000,
      ).then(() => r.url),
    );
  }

  const admin = async (method, path, body) => {
    const r = await call(gateway, method, path, { token: adminToken, body });
    expect(r.status >= 200 && r.status < 300, `${method} ${path}`, `${r.status} ${r.buf.toString('utf8')}`);
    return r.body;
  };
  let co, write, read;
  await step('company with API keys (admin API)', async () => {
    co = await admin('POST', '/admin/companies', { name: 'Imágenes Reales S.A.S.', nit: '900555777-3', taxRegime: 'COMMON', wallets: ['BREB', 'ACH'] });
    // This check polls (a send until COMPLETED, a deposit until ASSIGNED): above a company's default rate.
    await admin('PATCH', `/admin/companies/${co.id}`, { rateLimitMultiplier: 1000 });
    write = (await admin('POST', `/admin/companies/${co.id}/api-keys`, { scope: 'WRITE', label: 'images-write' })).key;
    read = (await admin('POST', `/admin/companies/${co.id}/api-keys`, { scope: 'READ', label: 'images-read' })).key;
    return co.id;
  });
  await step('credit of COP 1,000,000.00 to the Bre-B wallet', async () => {
    await admin('POST', `/admin/companies/${co.id}/wallets/BREB/credit`, { amountCents: 100_000_000, reference: 'images-credit' });
    const b = await call(gateway, 'GET', '/wallets/balance', { token: read });
    const breb = b.body?.wallets?.find((w) => w.rail === 'BREB');
    expect(b.status === 200 && BigInt(breb?.availableCents ?? -1) === 100_000_000n, 'balance after the credit', b.body);
    return `available ${breb.availableCents}`;
  });
  let sendId;
  await step('Bre-B send reaches COMPLETED', async () => {
    const k = await call(gateway, 'POST', '/transfers/resolve-key', { token: write, body: { keyValue: '3001112233' } });
    expect(k.status === 200, 'resolve-key', `${k.status} ${k.buf.toString('utf8')}`);
    const s = await call(gateway, 'POST', '/transfers/send', {
      token: write,
      body: {
        amount: 250_000,
        destination: { brebKey: { type: k.body.keyType, value: k.body.keyValue } },
        targetName: k.body.recipient.fullName,
        targetDocument: k.body.recipient.idValue,
        description: 'Prueba de imágenes',
        reference: 'images-send-1',
      },
    });
    expect(s.status === 201 && s.body.status === 'PENDING', 'send', `${s.status} ${s.buf.toString('utf8')}`);
    sendId = s.body.id;
    const done = await eventually('send COMPLETED', async () => {
      const t = await call(gateway, 'GET', `/wallets/transactions/${sendId}`, { token: read });
      return { ok: t.body?.status === 'COMPLETED', value: t.body, why: t.body?.status ?? t.status };
    });
    expect(done.status === 'COMPLETED', 'send status', done);
    return `${sendId} COMPLETED`;
  });
  await step('PSE link opened and paid: deposit ASSIGNED', async () => {
    const d = await call(gateway, 'POST', '/deposits/pse', {
      token: write,
      body: {
        amountCents: 500_000,
        payerDocumentTypeId: 1,
        payerDocumentNumber: '52123456',
        payerFirstName: 'Marta',
        payerLastName: 'Ríos',
        payerEmail: 'marta@example.com',
      },
    });
    expect(d.status === 201 && d.body.status === 'PENDING_CONFIRM', 'PSE deposit', `${d.status} ${d.buf.toString('utf8')}`);
    // The payer's browser opens the link: the sandbox's pay page, at its published address.
    const page = await fetch(d.body.paygatewayUrl, { signal: AbortSignal.timeout(10_000) });
    expect(page.status === 200 && /html/.test(page.headers.get('content-type') ?? ''), `pay page ${d.body.paygatewayUrl}`, page.status);
    const pay = await call(sandbox, 'POST', `/sandbox/pse/${d.body.id}/pay`, { body: { outcome: 'APPROVED', payerBank: 'Bancolombia' } });
    expect(pay.status === 200, 'pay at the provider', `${pay.status} ${pay.buf.toString('utf8')}`);
    const listed = await eventually('deposit ASSIGNED', async () => {
      const l = await call(gateway, 'GET', '/deposits?limit=20', { token: read });
      const x = l.body?.deposits?.find((i) => i.id === d.body.id);
      return { ok: x?.status === 'ASSIGNED', value: x, why: x?.status ?? l.status };
    });
    return `${d.body.id} ASSIGNED, net ${listed.netCreditedCents}`;
  });
  await step('receipt PDF of the send', async () => {
    const pdf = await eventually('receipt', async () => {
      const r = await call(gateway, 'GET', `/wallets/transactions/${sendId}/receipt.pdf`, { token: read });
      return { ok: r.status === 200, value: r, why: r.status };
    });
    expect(
      pdf.headers.get('content-type') === 'application/pdf' && pdf.buf.subarray(0, 5).toString() === '%PDF-',
      'receipt is a PDF',
      pdf.headers.get('content-type'),
    );
    return `${pdf.buf.length} bytes, sha256 ${pdf.headers.get('x-receipt-sha256')?.slice(0, 12)}…`;
  });
  await step("today's Bre-B and PSE reports reconciled: no break", async () => {
    // Today in Bogotá (UTC-5): the providers publish today's report up to now.
    const today = new Date(Date.now() - 5 * 3600_000).toISOString().slice(0, 10);
    const out = [];
    for (const rail of ['breb', 'pse']) {
      const started = await admin('POST', '/admin/reconciliations', { rail, date: today });
      const run = await eventually(`${rail} reconciliation`, async () => {
        const r = await call(gateway, 'GET', `/admin/reconciliations/${started.id}`, { token: adminToken });
        return { ok: r.status === 200 && r.body.status !== 'RUNNING', value: r.body, why: r.body?.status ?? r.status };
      });
      expect(run.status === 'RECONCILED' && run.breaks.total === 0 && run.matched.count === run.report.lines && run.report.lines >= 1, `${rail} run`, run);
      out.push(`${rail} ${run.report.lines} line(s) matched`);
    }
    return out.join(', ');
  });
  return steps;
}
