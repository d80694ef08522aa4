import { spawn } from 'node:child_process';
import { dirname, join } from 'node:path';
import { fileURLToPath } from 'node:url';
import pg from 'pg';
import { CHECK_NAMES, SABOTAGES, checkInvariants, selfTest, violationLines } from '@wallet/invariants';
import { eventually } from '@wallet/platform/testing';
import { startStack } from '../support/stack.js';

type Stack = Awaited<ReturnType<typeof startStack>>;
const CLI = join(dirname(fileURLToPath(import.meta.url)), '..', '..', 'services', 'invariants', 'dist', 'cli', 'check.js');

const VERIFY_CLI = join(dirname(fileURLToPath(import.meta.url)), '..', '..', 'services', 'ledger', 'dist', 'cli', 'verify.js');
const runVerify = (databaseUrl: string, args: string[] = []) => runCli(databaseUrl, args, VERIFY_CLI);

function runCli(databaseUrl: string, args: string[] = [], cli = CLI): Promise<{ code: number | null; out: string; err: string }> {
  return new Promise((resolve) => {
    const child = spawn(process.execPath, [cli, ...args], { env: { ...process.env, DATABASE_URL: databaseUrl }, stdio: ['ignore', 'pipe', 'pipe'] });
    let out = '',
      err = '';
    child.stdout.on('data', (d) => {
      out += d;
    });
    child.stderr.on('data', (d) => {
      err += d;
    });
    child.on('exit', (code) => resolve({ code, out, err }));
  });
}

/**
 * `npm run ledger:check` and the invariants module against a real installation (gateway, ledger,
 * transfer, pse-deposit, collect-key, sandbox rails) after real money moved: a Bre-B payout, a paid
 * PSE link and inbound Bre-B payments (one to a live key, one to a deleted key: unassigned funds).
 */
describe('cross-service invariants (npm run ledger:check)', () => {
  let stack: Stack;
  let client: pg.Client;
  /** Whether this stack installed the reconciliation (without it the clearing line is "not checked"). */
  let reconciliation: boolean;

  beforeAll(async () => {
    stack = await startStack({ transfers: true, deposits: true, collectKeys: true });
    const co = await stack.provision('Invariantes S.A.S.');
    await stack.admin('PATCH', `/admin/companies/${co.id}`, { rateLimitMultiplier: 1000 });
    for (const rail of ['BREB', 'ACH'])
      await stack.admin('POST', `/admin/companies/${co.id}/wallets/${rail}/credit`, { amountCents: 5_000_000, reference: `seed-${rail}` });

    const key = await stack.http('POST', '/transfers/resolve-key', { token: co.writeKey, body: { keyValue: '3004445566' } });
    const sent = await stack.http('POST', '/transfers/send', {
      token: co.writeKey,
      body: {
        amount: 120_000,
        destination: { brebKey: { type: key.body.keyType, value: key.body.keyValue } },
        targetName: key.body.recipient.fullName,
        targetDocument: key.body.recipient.idValue,
      },
    });
    expect(sent.status).toBe(201);

    const dep = await stack.http('POST', '/deposits/pse', {
      token: co.writeKey,
      body: {
        amountCents: 300_000,
        payerDocumentTypeId: 1,
        payerDocumentNumber: '1020304050',
        payerFirstName: 'Laura',
        payerLastName: 'Gómez',
        payerEmail: 'laura@example.com',
        payerPhone: '3101234567',
      },
    });
    expect(dep.status).toBe(201);
    const paid = await fetch(`${stack.sandbox!.url}/sandbox/pse/${dep.body.id}/pay`, {
      method: 'POST',
      headers: { 'content-type': 'application/json' },
      body: JSON.stringify({ outcome: 'APPROVED', payerBank: 'Bancolombia' }),
    });
    expect(paid.status).toBe(200);

    const live = await stack.http('POST', '/breb/collect-keys', { token: co.writeKey, body: { externalId: 'cliente-1', name: 'Tienda Uno' } });
    const gone = await stack.http('POST', '/breb/collect-keys', { token: co.writeKey, body: { externalId: 'cliente-2', name: 'Tienda Dos' } });
    expect(await stack.http('DELETE', `/breb/collect-keys/${gone.body.id}`, { token: co.writeKey })).toMatchObject({ status: 200 });
    for (const [keyValue, amountCents] of [
      [live.body.key.value, 80_000],
      [gone.body.key.value, 40_000],
    ] as const) {
      const r = await fetch(`${stack.sandbox!.url}/sandbox/breb/incoming`, {
        method: 'POST',
        headers: { 'content-type': 'application/json' },
        body: JSON.stringify({ keyValue, amountCents, payerName: 'Pedro Pérez', payerDocument: 'CC 79123456', payerBank: 'Nequi' }),
      });
      expect(r.status).toBe(202);
    }
    // Everything final: the payout paid, the link credited, both inbound payments listed.
    await eventually(
      async () => (await stack.http('GET', `/wallets/transactions/${sent.body.id}`, { token: co.readKey })).body.status === 'COMPLETED',
      20_000,
      100,
    );
    await eventually(
      async () => {
        const r = await stack.http('GET', '/deposits?limit=100', { token: co.readKey });
        const statuses = r.body.deposits.map((d: { status: string }) => d.status).sort();
        return statuses.join() === 'ASSIGNED,ASSIGNED,UNASSIGNED';
      },
      20_000,
      100,
    );
    client = new pg.Client({ connectionString: stack.databaseUrl });
    await client.connect();
    reconciliation = (await client.query(`select 1 from pg_namespace where nspname = 'reconciliation'`)).rowCount === 1;
  }, 90_000);
  afterAll(async () => {
    await client?.end();
    await stack?.stop();
  });

  it('holds over real money, settled, with the sandbox as the rails’ truth', async () => {
    const report = await eventually(
      async () => {
        const r = await checkInvariants(client, { settled: true, rail: 'auto' });
        return r.ok ? r : undefined; // the receipts/listing projections may lag a moment behind the 2xx
      },
      10_000,
      200,
    ).catch(async () => checkInvariants(client, { settled: true, rail: 'auto' }));
    expect(violationLines(report)).toEqual([]);
    expect(report.rail).toBe('sandbox');
    expect(report.checks.map((c) => c.name)).toEqual([...CHECK_NAMES]);
    const count = (check: string, label: string) => report.checks.find((c) => c.name === check)!.counts.find(([k]) => k === label)?.[1];
    expect(count('holds', 'transfers')).toBe(1);
    expect(count('holds', 'completed')).toBe(1);
    expect(count('deposits', 'PSE deposits')).toBe(1);
    expect(count('deposits', 'Bre-B listed')).toBe(2);
    expect(count('inbound', 'payments')).toBe(2);
    expect(count('inbound', 'unassigned')).toBe(1);
    expect(count('inbound', 'delivered by the network')).toBe(2);
    expect(report.checks.filter((c) => c.name !== 'clearing').every((c) => c.notChecked.length === 0)).toBe(true);
    expect(report.checks.find((c) => c.name === 'clearing')!.notChecked).toEqual(reconciliation ? [] : ['no reconciliation']);
  });

  it('each check fails on its planted violation, inside a transaction that is rolled back', async () => {
    const results = await selfTest(client, { rail: 'auto' });
    expect(results.map((r) => [r.check, r.caught || r.skipped])).toEqual(
      SABOTAGES.map((s) => [s.check, s.check === 'clearing' && !reconciliation ? 'no reconciliation installed' : true]),
    );
    // Nothing of the sabotage stayed.
    expect((await checkInvariants(client, { rail: 'auto' })).ok).toBe(true);
  });

  it('a check reads only through its service’s read-only role: no writes, no other schema', async () => {
    await client.query('begin');
    try {
      await client.query('set local role wallet_ledger_reader');
      await expect(client.query('select count(*) from ledger.postings')).resolves.toBeDefined();
      await client.query('savepoint a');
      await expect(client.query('select count(*) from transfer.transfers')).rejects.toMatchObject({ code: '42501' });
      await client.query('rollback to savepoint a');
      await expect(client.query(`update ledger.wallets set available_cents = available_cents + 1`)).rejects.toMatchObject({ code: '42501' });
    } finally {
      await client.query('rollback');
    }
  });

  it('the CLI prints one line per invariant with counts, exits 1 when a violation is planted, and self-tests', async () => {
    const ok = await runCli(stack.databaseUrl);
    expect(ok.err).toBe('');
    expect(ok.code).toBe(0);
    const lines = ok.out.split('\n');
    for (const name of CHECK_NAMES) {
      const line = name === 'clearing' && !reconciliation ? /^clearing +not checked \(no reconciliation\)$/ : new RegExp(`^${name} +OK +\\d`);
      expect(lines.filter((l) => l.startsWith(`${name} `))).toEqual([expect.stringMatching(line)]);
    }
    expect(ok.out).toMatch(/^holds +OK +1 transfers, 0 live, 1 completed, 0 open holds$/m);
    expect(ok.out).toContain('rail truth: sandbox');
    expect(ok.out).toMatch(/invariants: OK\n$/);

    const broken = await runCli(stack.databaseUrl, ['--break', 'holds']);
    expect(broken.code).toBe(1);
    expect(broken.out).toMatch(/^holds +VIOLATED \(1\) /m);
    expect(broken.out).toMatch(/- transfer [0-9a-f-]{36} \(company selftest-\w+\) DISPATCHED: has no hold; DISPATCHED allows OPEN/);
    expect(broken.out).toContain('invariants: VIOLATED (holds)');

    const exc = await runCli(stack.databaseUrl, ['--break', 'exceptions']);
    expect(exc.code).toBe(1);
    expect(exc.out).toMatch(
      /open money exceptions \(1\), oldest first:\n {2}exc_[0-9a-f]{32} {2}RAIL_COMPLETED_AFTER_RELEASE {2}RESOLVING {2}transfer [0-9a-f-]{36} {2}company selftest-\w+ {2}open 1 d 0 h/,
    );

    // clearing: planted where the reconciliation is installed; else nothing can be planted (exit 2, said).
    const clearing = await runCli(stack.databaseUrl, ['--break', 'clearing']);
    expect(clearing.code).toBe(reconciliation ? 1 : 2);
    expect(clearing.out).toContain(
      reconciliation ? 'invariants: VIOLATED (clearing)' : '(no clearing violation could be planted: no reconciliation installed; the report as it is)',
    );

    const self = await runCli(stack.databaseUrl, ['--self-test']);
    expect(self.code).toBe(0);
    expect(self.out).toContain(
      reconciliation
        ? `self-test: all ${SABOTAGES.length} planted violations caught (rolled back)`
        : `self-test: all ${SABOTAGES.length - 1} planted violations caught (rolled back) (1 skipped: clearing)`,
    );

    // After all that, the installation is as it was.
    expect((await runCli(stack.databaseUrl)).code).toBe(0);
  }, 60_000);

  it('the tamper-evident journal (npm run ledger:verify, GET /admin/ledger/verification): intact after real money, broken by an edit as a superuser would make it', async () => {
    // every posting of the money above is sealed within a second or so
    const sealed = await eventually(
      async () => {
        const r = await stack.admin('GET', '/admin/ledger/verification');
        return r.status === 200 && r.body.pending === 0 && r.body.verified > 0 ? r.body : undefined;
      },
      20_000,
      200,
    );
    const postings = Number((await client.query('select count(*) as n from ledger.postings')).rows[0].n);
    expect(sealed).toMatchObject({ ok: true, verified: postings, broken: 0, firstBroken: null, outsideJournal: [], start: { seq: '0', hash: '0'.repeat(64) } });
    expect(sealed.head).toEqual({ seq: String(postings), hash: expect.stringMatching(/^[0-9a-f]{64}$/) });
    const cli = await runVerify(stack.databaseUrl);
    expect({ code: cli.code, err: cli.err }).toEqual({ code: 0, err: '' });
    expect(cli.out).toContain(`journal INTACT: ${postings.toLocaleString('en')} sealed postings verified from genesis`);

    // an entry's amount changed in place (a superuser's UPDATE): named, by the API and the CLI
    const { rows } = await client.query(
      `select j.seq::text as seq, j.posting_id::text as id from ledger.journal j join ledger.postings p on p.id = j.posting_id where p.kind = 'commit' order by j.seq limit 1`,
    );
    const target = rows[0] as { seq: string; id: string };
    await client.query(`update ledger.entries set amount = amount * 10 where posting_id = $1 and seq = 1`, [target.id]);
    try {
      const r = await stack.admin('GET', '/admin/ledger/verification');
      expect(r.status).toBe(200);
      expect(r.body).toMatchObject({ ok: false, broken: 1, firstBroken: { seq: target.seq, postingId: target.id, reason: 'CONTENT_CHANGED' } });
      const broken = await runVerify(stack.databaseUrl);
      expect(broken.code).toBe(1);
      expect(broken.out).toContain(`first broken: CONTENT_CHANGED at #${target.seq} (posting ${target.id})`);
      // from a trusted head past the edit, the rest verifies (and the head must be the chain's)
      const after = await stack.admin('GET', `/admin/ledger/verification?fromSeq=${sealed.head.seq}&fromHash=${sealed.head.hash}`);
      expect(after.body).toMatchObject({ ok: true, verified: 0 });
      const forged = await stack.admin('GET', `/admin/ledger/verification?fromSeq=${sealed.head.seq}&fromHash=${'0'.repeat(64)}`);
      expect(forged.body).toMatchObject({ ok: false, firstBroken: { seq: sealed.head.seq, postingId: null, reason: 'HEAD_MISMATCH' } });
    } finally {
      await client.query(`update ledger.entries set amount = amount / 10 where posting_id = $1 and seq = 1`, [target.id]);
    }
    expect((await stack.admin('GET', '/admin/ledger/verification')).body.ok).toBe(true);
    expect((await runVerify(stack.databaseUrl, ['--json'])).out).toMatch(/"ok": true/);

    // bad input, and no credential
    for (const q of ['fromSeq=1', `fromHash=${'a'.repeat(64)}`, 'fromSeq=-1&fromHash=' + 'a'.repeat(64), 'fromSeq=1&fromHash=XYZ', 'other=1']) {
      const bad = await stack.admin('GET', `/admin/ledger/verification?${q}`);
      expect({ q, status: bad.status, error: bad.body.error }).toEqual({ q, status: 400, error: 'INVALID_REQUEST' });
    }
    expect((await stack.http('GET', '/admin/ledger/verification')).status).toBe(401);
    expect((await runVerify(stack.databaseUrl, ['--from-seq', '1'])).code).toBe(2);
  }, 90_000);

  it('cannot run without the read paths: exit 2 and why', async () => {
    const r = await runCli(stack.databaseUrl.replace(/\/[^/?]+(\?|$)/, '/wallet_no_such_db$1'));
    expect(r.code).toBe(2);
    expect(r.err).toMatch(/^the invariant check could not run: /);
  });
});
