// The company is told (docs/security.md "The company is told"): SecurityNotices.record writes the company.security_changed event
// (gateway outbox) and the e-mails to the company's active admins (mail outbox) in the caller's
// transaction, and nothing when it rolls back; the MailSender delivers over real SMTP after commit,
// retries a refused mail without sending a sent one again, and two senders never send one mail twice.
import { randomUUID } from 'node:crypto';
import type { AddressInfo } from 'node:net';
import { SMTPServer } from 'smtp-server';
import { createLogger, Database, SecretBox } from '@wallet/platform';
import { createTestDatabase, type TestDatabase } from '@wallet/platform/testing';
import { MailOutbox, MailSender } from '../src/app/mail-outbox.js';
import { SecurityNotices } from '../src/app/security-notices.js';
import { SmtpMailTransport } from '../src/mail/smtp-transport.js';
import { gatewayMigrations } from '../src/persistence/migrations/index.js';

const KEY = 'k'.repeat(40);
const log = createLogger('gateway-test', 'silent');
let tdb: TestDatabase;
let db: Database;

interface Received {
  to: string[];
  raw: string;
}
/** A loopback SMTP server; `refuse` answers the next N messages with 451 (a temporary failure). */
async function smtpServer() {
  const received: Received[] = [];
  let refuse = 0;
  const server = new SMTPServer({
    authOptional: true,
    disabledCommands: ['AUTH', 'STARTTLS'],
    hideSTARTTLS: true,
    logger: false,
    onData(stream, session, cb) {
      const chunks: Buffer[] = [];
      stream.on('data', (c: Buffer) => chunks.push(c));
      stream.on('end', () => {
        if (refuse > 0) {
          refuse--;
          cb(Object.assign(new Error('try again later'), { responseCode: 451 }));
          return;
        }
        received.push({ to: session.envelope.rcptTo.map((r) => r.address), raw: Buffer.concat(chunks).toString('utf8') });
        cb();
      });
    },
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', () => resolve()));
  const port = (server.server.address() as AddressInfo).port;
  return {
    url: `smtp://127.0.0.1:${port}`,
    received,
    refuseNext(n: number) {
      refuse = n;
    },
    close: () => new Promise<void>((resolve) => server.close(() => resolve())),
  };
}

async function company(): Promise<string> {
  const id = randomUUID();
  await db.query(`insert into gateway.companies (id, name, nit, tax_regime) values (?, ?, ?, 'COMMON')`, [
    id,
    'Andina S.A.S.',
    `900${Math.floor(Math.random() * 1e6)}-1`,
  ]);
  return id;
}

async function user(companyId: string, email: string, role: string, state: 'active' | 'disabled' | 'invited'): Promise<void> {
  await db.query(
    `insert into gateway.dashboard_users (id, company_id, email, password_hash, role, totp_secret_enc, activated_at, disabled_at)
     values (?, ?, ?, ?, ?, ?, ?, ?)`,
    [
      randomUUID(),
      companyId,
      email,
      state === 'invited' ? null : 'x',
      role,
      state === 'invited' ? null : 'x',
      state === 'invited' ? null : new Date(),
      state === 'disabled' ? new Date() : null,
    ],
  );
}

const rows = <T = any>(sql: string, params: unknown[] = []) => db.query<T>(sql, params);

beforeAll(async () => {
  tdb = await createTestDatabase('gwsn');
  db = await Database.open({ url: tdb.url, schema: 'gateway', migrations: gatewayMigrations, logger: log });
  await db.migrate();
});
afterAll(async () => {
  await db?.close();
  await tdb?.drop();
});

describe('SecurityNotices.record', () => {
  it("writes the event and one sealed e-mail per active ADMIN in the caller's transaction", async () => {
    const companyId = await company();
    await user(companyId, 'ana.admin@andina.co', 'ADMIN', 'active');
    await user(companyId, 'beto.admin@andina.co', 'ADMIN', 'active');
    await user(companyId, 'carla.ex@andina.co', 'ADMIN', 'disabled');
    await user(companyId, 'dora.invitada@andina.co', 'ADMIN', 'invited');
    await user(companyId, 'eva.operadora@andina.co', 'OPERATOR', 'active');
    const other = await company();
    await user(other, 'otro.admin@otra.co', 'ADMIN', 'active');

    const notices = new SecurityNotices(new MailOutbox({ secretKey: KEY }));
    await db.tx((tx) =>
      notices.record(tx, {
        companyId,
        change: 'API_KEY_REVOKED',
        summary: 'Se revocó la clave de API wk_test_ab12… (producción).',
        actor: { kind: 'operator', id: '11111111-1111-4111-8111-111111111111' },
        details: { keyId: 'k1' },
      }),
    );

    const events = await rows(`select subject, payload, published_at from gateway.outbox where payload->>'companyId' = ?`, [companyId]);
    expect(events).toHaveLength(1);
    expect(events[0]).toMatchObject({ subject: 'company.security_changed', published_at: null });
    expect(events[0].payload).toMatchObject({
      companyId,
      change: 'API_KEY_REVOKED',
      actorKind: 'operator',
      actorId: '11111111-1111-4111-8111-111111111111',
      summary: 'Se revocó la clave de API wk_test_ab12… (producción).',
      detailsJson: '{"keyId":"k1"}',
    });
    expect(events[0].payload.eventId).toMatch(/^[0-9a-f-]{36}$/);

    const mails = await rows(
      `select kind, company_id::text as company_id, recipient, subject_enc, text_enc, html_enc, sent_at from gateway.mail_outbox where company_id = ? order by recipient`,
      [companyId],
    );
    expect(mails.map((m) => m.recipient)).toEqual(['ana.admin@andina.co', 'beto.admin@andina.co']);
    const box = new SecretBox(KEY);
    for (const m of mails) {
      expect(m).toMatchObject({ kind: 'company.security_changed', company_id: companyId, sent_at: null });
      // Sealed at rest: the text is not in the row, and opens with the gateway's key.
      expect(JSON.stringify(m)).not.toContain('revocó');
      expect(box.open(m.subject_enc)).toBe('Clave de API revocada: Andina S.A.S.');
      const text = box.open(m.text_enc);
      expect(text).toContain('Se revocó la clave de API wk_test_ab12… (producción).');
      expect(text).toContain('un operador de la plataforma');
      expect(text).toContain('Si usted no reconoce este cambio');
      expect(box.open(m.html_enc)).toContain('<table>');
    }
  });

  it("writes nothing when the caller's transaction rolls back", async () => {
    const companyId = await company();
    await user(companyId, 'rollback.admin@andina.co', 'ADMIN', 'active');
    const notices = new SecurityNotices(new MailOutbox({ secretKey: KEY }));
    await expect(
      db.tx(async (tx) => {
        await notices.record(tx, { companyId, change: 'LIMITS_CHANGED', summary: 'Cambió el límite.', actor: { kind: 'bootstrap-token', id: null } });
        // The notice was written in this transaction (seen inside it) …
        const inside = await tx.query(`select 1 from gateway.mail_outbox where company_id = ?`, [companyId]);
        expect(inside).toHaveLength(1);
        throw new Error('the change failed');
      }),
    ).rejects.toThrow('the change failed');
    // … and went with it.
    expect(await rows(`select 1 from gateway.outbox where payload->>'companyId' = ?`, [companyId])).toEqual([]);
    expect(await rows(`select 1 from gateway.mail_outbox where company_id = ?`, [companyId])).toEqual([]);
  });

  it('an effective date and an approval request are in the event and the e-mail', async () => {
    const companyId = await company();
    await user(companyId, 'fecha.admin@andina.co', 'ADMIN', 'active');
    const notices = new SecurityNotices(new MailOutbox({ secretKey: KEY }));
    await db.tx((tx) =>
      notices.record(tx, {
        companyId,
        change: 'MULTISIG_THRESHOLD_CHANGE_REQUESTED',
        summary: 'Se pidió bajar las aprobaciones de 2 a 1.',
        actor: { kind: 'dashboard-user', id: 'u1' },
        approvalRequestId: 'apr_1',
        effectiveAt: '2026-12-01T15:00:00.000000Z',
      }),
    );
    const [e] = await rows(`select payload from gateway.outbox where payload->>'companyId' = ?`, [companyId]);
    expect(e.payload).toMatchObject({ approvalRequestId: 'apr_1', change: 'MULTISIG_THRESHOLD_CHANGE_REQUESTED' });
    expect(e.payload.effectiveAt).toMatch(/^2026-12-01T15:00:00(\.0+)?Z$/);
    const [m] = await rows(`select text_enc from gateway.mail_outbox where company_id = ?`, [companyId]);
    const text = new SecretBox(KEY).open(m.text_enc);
    expect(text).toContain('Entra en vigor: 1 de diciembre de 2026');
    expect(text).toContain('10:00');
    expect(text).toContain('Solicitud de aprobación: apr_1');
  });
});

describe('MailSender', () => {
  const settings = { secretKey: KEY, intervalMs: 60_000, retryBaseMs: 50, retryMaxDelayMs: 1_000, maxAttempts: 5 };

  it('sends after commit, retries a refused mail, never sends a sent one again, and blanks the body', async () => {
    await db.query(`update gateway.mail_outbox set sent_at = now() where sent_at is null`); // earlier tests' mails
    const smtp = await smtpServer();
    const transport = new SmtpMailTransport(smtp.url, 'Pagos <no-reply@pagos.example.co>', 5_000);
    const sender = new MailSender(db, transport, { ...settings, retryBaseMs: 1_000 }, log);
    try {
      const outbox = new MailOutbox({ secretKey: KEY });
      const id = await db.tx((tx) =>
        outbox.enqueue(tx, { to: 'ana@andina.co', subject: 'Su clave', text: 'La clave es wk_test_SECRETO123', kind: 'api-key.delivered' }),
      );
      smtp.refuseNext(1);
      expect(await sender.runOnce()).toBe(0);
      let [row] = await rows(`select attempts, last_error, sent_at, text_enc from gateway.mail_outbox where id = ?`, [id]);
      expect(row).toMatchObject({ attempts: 1, sent_at: null });
      expect(row.last_error).toMatch(/451/);
      expect(row.text_enc).not.toBeNull();
      expect(smtp.received).toHaveLength(0);
      // Not before its backoff …
      expect(await sender.runOnce()).toBe(0);
      // … then it goes.
      await new Promise((r) => setTimeout(r, 1_100));
      expect(await sender.runOnce()).toBe(1);
      [row] = await rows(`select attempts, last_error, sent_at, message_id, text_enc, html_enc from gateway.mail_outbox where id = ?`, [id]);
      expect(row).toMatchObject({ attempts: 2, last_error: null, text_enc: null, html_enc: null });
      expect(row.sent_at).not.toBeNull();
      expect(row.message_id).toMatch(/@/);
      expect(smtp.received).toHaveLength(1);
      expect(smtp.received[0]!.to).toEqual(['ana@andina.co']);
      expect(smtp.received[0]!.raw).toContain('wk_test_SECRETO123');
      expect(smtp.received[0]!.raw).toContain('Subject: Su clave');
      // Sent stays sent.
      await new Promise((r) => setTimeout(r, 120));
      expect(await sender.runOnce()).toBe(0);
      expect(smtp.received).toHaveLength(1);
    } finally {
      await sender.stop();
      transport.close();
      await smtp.close();
    }
  });

  it('gives a mail up after its last attempt (body blanked, not sent)', async () => {
    const smtp = await smtpServer();
    const transport = new SmtpMailTransport(smtp.url, 'Pagos <no-reply@pagos.example.co>', 5_000);
    const sender = new MailSender(db, transport, { ...settings, retryBaseMs: 10, maxAttempts: 2 }, log);
    try {
      const id = await db.tx((tx) =>
        new MailOutbox({ secretKey: KEY }).enqueue(tx, { to: 'nadie@andina.co', subject: 'x', text: 'enlace secreto', kind: 'test' }),
      );
      smtp.refuseNext(2);
      await sender.runOnce();
      await new Promise((r) => setTimeout(r, 50));
      await sender.runOnce();
      const [row] = await rows(`select attempts, sent_at, failed_at, text_enc from gateway.mail_outbox where id = ?`, [id]);
      expect(row).toMatchObject({ attempts: 2, sent_at: null, text_enc: null });
      expect(row.failed_at).not.toBeNull();
      await new Promise((r) => setTimeout(r, 50));
      await sender.runOnce();
      expect(smtp.received).toHaveLength(0);
    } finally {
      await sender.stop();
      transport.close();
      await smtp.close();
    }
  });

  it('two senders (two replicas) share the outbox: every mail once', async () => {
    const smtp = await smtpServer();
    const transports = [0, 1].map(() => new SmtpMailTransport(smtp.url, 'Pagos <no-reply@pagos.example.co>', 5_000));
    const senders = transports.map((t) => new MailSender(db, t, { ...settings, batch: 100 }, log));
    try {
      const outbox = new MailOutbox({ secretKey: KEY });
      const to = Array.from({ length: 12 }, (_, i) => `admin${i}@andina.co`);
      await db.tx(async (tx) => {
        for (const t of to) await outbox.enqueue(tx, { to: t, subject: 's', text: 't', kind: 'test' });
      });
      const sent = await Promise.all(senders.map((s) => s.runOnce()));
      expect(sent[0]! + sent[1]!).toBe(12);
      expect(smtp.received.map((r) => r.to[0]).sort()).toEqual([...to].sort());
    } finally {
      for (const s of senders) await s.stop();
      for (const t of transports) t.close();
      await smtp.close();
    }
  });

  it('a sender with another key leaves the mail to one that can open it (a rotation, a second gateway on the database)', async () => {
    const smtp = await smtpServer();
    const transport = new SmtpMailTransport(smtp.url, 'Pagos <no-reply@pagos.example.co>', 5_000);
    const other = new MailSender(db, transport, { ...settings, secretKey: 'otra-clave-de-cifrado-0123456789abcdef' }, log);
    const mine = new MailSender(db, transport, settings, log);
    try {
      const id = await db.tx((tx) => new MailOutbox({ secretKey: KEY }).enqueue(tx, { to: 'rotacion@andina.co', subject: 's', text: 'enlace', kind: 'test' }));
      expect(await other.runOnce()).toBe(0);
      const [row] = await rows(`select attempts, failed_at, text_enc from gateway.mail_outbox where id = ?`, [id]);
      expect(row).toMatchObject({ attempts: 0, failed_at: null });
      expect(row.text_enc).not.toBeNull();
      expect(await mine.runOnce()).toBeGreaterThanOrEqual(1);
      expect(smtp.received.map((r) => r.to[0])).toContain('rotacion@andina.co');
    } finally {
      await other.stop();
      await mine.stop();
      transport.close();
      await smtp.close();
    }
  });

  it("refuses what is not one address (a caller's bug), without writing", async () => {
    const outbox = new MailOutbox({ secretKey: KEY });
    await expect(db.tx((tx) => outbox.enqueue(tx, { to: 'a@b.co, c@d.co', subject: 's', text: 't', kind: 'test' }))).rejects.toThrow(/not one e-mail address/);
    await expect(db.tx((tx) => outbox.enqueue(tx, { to: 'a@b.co\r\nBcc: x@y.co', subject: 's', text: 't', kind: 'test' }))).rejects.toThrow(
      /not one e-mail address/,
    );
  });
});
