import { Writable } from 'node:stream';
import { captureLogs } from '../testing/capture-logs.js';
import { createLogger, maskPersonalData, scrubPersonalData, serializeError } from './logger.js';

function capture(level = 'debug') {
  let text = '';
  const sink = new Writable({
    write(chunk, _enc, cb) {
      text += chunk.toString();
      cb();
    },
  });
  const log = createLogger('spec', level, {}, sink);
  return {
    log,
    raw: () => text,
    lines: () =>
      text
        .split('\n')
        .filter(Boolean)
        .map((l) => JSON.parse(l) as Record<string, any>),
  };
}

describe('personal data in logs', () => {
  it('masks a value to its last characters, an e-mail to its first letter and domain', () => {
    expect(maskPersonalData('3001234567')).toBe('******4567');
    expect(maskPersonalData('juana.perez@correo.com')).toBe('j***@correo.com');
    expect(maskPersonalData('@abc12')).toBe('******12');
    expect(maskPersonalData('1234')).toBe('******');
  });

  it('masks key values, documents, e-mails and account numbers at any depth, keeping other fields', () => {
    const { log, raw, lines } = capture();
    log.info(
      {
        keyValue: '3001234567',
        payerDocument: 'CC 79123456',
        transferId: 't-1',
        amountCents: '150000000',
        destination: { accountNumber: '40987654321', documentNumber: '52987654' },
        event: { payload: { brebKeyValue: 'juana.perez@correo.com', targetDocument: '1020304050' } },
        signer: { email: 'ana@empresa.co' },
        already: { keyValue: '******4567' },
      },
      'sent',
    );
    for (const v of ['3001234567', '79123456', '40987654321', '52987654', 'juana.perez@correo.com', '1020304050', 'ana@empresa.co']) {
      expect(raw()).not.toContain(v);
    }
    expect(lines()[0]).toMatchObject({
      keyValue: '******4567',
      payerDocument: '******3456',
      transferId: 't-1',
      amountCents: '150000000',
      destination: { accountNumber: '****4321', documentNumber: '******7654' },
      event: { payload: { brebKeyValue: 'j***@correo.com', targetDocument: '******4050' } },
      signer: { email: 'a***@empresa.co' },
      already: { keyValue: '******4567' },
    });
  });

  it("redacts secrets and masks personal data at any depth, in arrays, without touching the caller's object", () => {
    const { log, raw, lines } = capture();
    const deep = { a: { b: { c: { d: { e: { accountNumber: '40987654321', secret: 's3cr3t-value', keep: 'ok' } } } } } };
    const list = { recipients: [{ email: 'uno@correo.com' }, { email: 'dos@correo.com' }], keyValue: ['3001234567', '3007654321'] };
    log.info({ deep, list }, 'nested');
    expect(raw()).not.toMatch(/40987654321|s3cr3t-value|uno@correo|dos@correo|3001234567|3007654321/);
    expect(lines()[0]).toMatchObject({
      deep: { a: { b: { c: { d: { e: { accountNumber: '****4321', secret: '[redacted]', keep: 'ok' } } } } } },
      list: { recipients: [{ email: 'u***@correo.com' }, { email: 'd***@correo.com' }], keyValue: ['******4567', '******4321'] },
    });
    expect(deep.a.b.c.d.e.accountNumber).toBe('40987654321');
  });

  it('scrubs values pasted into messages and error strings, and drops the values database errors quote', () => {
    const { log, raw, lines } = capture();
    log.warn('payment to 3001234567 from laura@example.com refused');
    log.warn({ err: 'invalid input for "1020304050"' }, 'x');
    const pgError = Object.assign(new Error('duplicate key value violates unique constraint "keys_value_uq"'), {
      code: '23505',
      constraint: 'keys_value_uq',
      detail: 'Key (key_value)=(@3157654321) already exists.',
    });
    log.error({ err: pgError }, 'unhandled');
    const check = Object.assign(new Error('new row violates check constraint'), { detail: 'Failing row contains (40987654321, 52987654).' });
    log.error({ err: check }, 'unhandled');
    for (const v of ['3001234567', 'laura@example.com', '1020304050', '3157654321', '40987654321', '52987654']) expect(raw()).not.toContain(v);
    const [a, b, c] = lines();
    expect(a!.msg).toBe('payment to ******4567 from l***@example.com refused');
    expect(b!.err).toBe('invalid input for "******4050"');
    expect(c!.err).toMatchObject({ code: '23505', constraint: 'keys_value_uq', detail: '[redacted]', message: expect.stringContaining('keys_value_uq') });
  });

  it('leaves ids, amounts in fields, dates and short numbers in text alone', () => {
    expect(scrubPersonalData('transfer 0b6f3c8e-1234-4567-8901-234567890123 at 2026-01-02T03:04:05Z, http 503, 5000 ms')).toBe(
      'transfer 0b6f3c8e-1234-4567-8901-234567890123 at 2026-01-02T03:04:05Z, http 503, 5000 ms',
    );
    expect(serializeError('plain')).toBe('plain');
  });

  it('a capture takes every logger created while it runs, at its level, whatever they were asked', () => {
    const logs = captureLogs('debug');
    try {
      const silent = createLogger('quiet-service', 'silent');
      silent.debug({ keyValue: '3001234567' }, 'seen');
      const lines = logs.lines().map((l) => JSON.parse(l) as Record<string, unknown>);
      expect(lines).toEqual([expect.objectContaining({ service: 'quiet-service', level: 'debug', msg: 'seen', keyValue: '******4567' })]);
    } finally {
      logs.stop();
    }
    const after = createLogger('after', 'silent');
    after.error('not captured');
    expect(logs.lines()).toHaveLength(1);
  });
});
