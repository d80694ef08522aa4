import { createTestDatabase, type TestDatabase } from '@wallet/platform/testing';
import nodemailer from 'nodemailer';
import { startSandbox } from '../src/testing.js';
import { api } from './support.js';

describe('SMTP sink', () => {
  let tdb: TestDatabase;
  let sandbox: Awaited<ReturnType<typeof startSandbox>>;
  const call = api(() => sandbox.url);

  beforeAll(async () => {
    tdb = await createTestDatabase('sbx_smtp');
    sandbox = await startSandbox({ databaseUrl: tdb.url, port: 0 });
  });
  afterAll(async () => {
    await sandbox?.stop();
    await tdb?.drop();
  });

  it('stores every message and lists it by recipient, newest first', async () => {
    const transport = nodemailer.createTransport({ host: '127.0.0.1', port: sandbox.smtpPort, secure: false, ignoreTLS: true });
    const first = await transport.sendMail({
      from: '"Billetera" <no-reply@wallet.test>',
      to: 'Ana.Gomez@Example.com',
      cc: 'ops@wallet.test',
      bcc: 'audit@wallet.test',
      subject: 'Su enlace de pago PSE',
      text: 'Pague aquí: http://127.0.0.1/pse/pay/dep_1',
      html: '<p>Pague <a href="http://127.0.0.1/pse/pay/dep_1">aquí</a></p>',
    });
    await transport.sendMail({ from: 'no-reply@wallet.test', to: 'ana.gomez@example.com', subject: 'Segundo', text: 'Hola' });
    await transport.sendMail({ from: 'no-reply@wallet.test', to: 'otro@example.com', subject: 'Otro', text: 'x' });
    transport.close();

    const r = await call('GET', `/sandbox/emails?to=${encodeURIComponent('ANA.gomez@example.com')}`);
    expect(r.status).toBe(200);
    expect(r.body.items.map((m: { subject: string }) => m.subject)).toEqual(['Segundo', 'Su enlace de pago PSE']);
    const m = r.body.items[1];
    expect(m).toMatchObject({
      messageId: first.messageId,
      from: '"Billetera" <no-reply@wallet.test>',
      subject: 'Su enlace de pago PSE',
      text: 'Pague aquí: http://127.0.0.1/pse/pay/dep_1',
      html: '<p>Pague <a href="http://127.0.0.1/pse/pay/dep_1">aquí</a></p>',
    });
    // All envelope recipients (To, Cc and Bcc); the client may lower-case the domain.
    expect(m.to.map((a: string) => a.toLowerCase()).sort()).toEqual(['ana.gomez@example.com', 'audit@wallet.test', 'ops@wallet.test']);
    expect(Date.parse(m.receivedAt)).not.toBeNaN();
    expect(r.body.items[0].html).toBeNull();

    expect((await call('GET', '/sandbox/emails?to=audit@wallet.test')).body.items).toHaveLength(1);
    expect((await call('GET', '/sandbox/emails?to=nadie@example.com')).body.items).toEqual([]);
    const all = await call('GET', '/sandbox/emails');
    expect(all.body.items.map((x: { subject: string }) => x.subject)).toEqual(['Otro', 'Segundo', 'Su enlace de pago PSE']);
  });
});
