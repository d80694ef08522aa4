// The choice and the redaction of `npm run openapi:examples` (test/scripts/record-examples.mjs) on
// hand-made candidates: no secret of a recorded answer reaches gateway/src/openapi/examples.json.
type Candidate = { operationId: string; status: number; file: string; n: number; request?: unknown; response?: unknown };
interface Script {
  placeholder(secret: string): string;
  redact(value: unknown): any;
  buildExamples(lines: Candidate[]): Record<string, { request?: any; responses?: Record<string, any> }>;
}

const SCRIPT = './record-examples.mjs';
let script: Script;
beforeAll(async () => {
  script = (await import(SCRIPT)) as Script;
});

describe('record-examples: redaction', () => {
  it('a placeholder has the length and alphabet of the secret, is the same on every run, and is not the secret', () => {
    for (const secret of ['emytJWVwfj44qdJIIoXXGvSioS0CGifniJpNAVD3', '9f86d081884c7d659a2feaa0c55ad015', 'JBSWY3DPEHPK3PXP', '1234567890123']) {
      const p = script.placeholder(secret);
      expect(p).toHaveLength(secret.length);
      expect(p).not.toBe(secret);
      expect(script.placeholder(secret)).toBe(p);
      for (let i = 0; i < secret.length; i++) {
        const kind = (c: string) => (/\d/.test(c) ? 'digit' : /[a-z]/.test(c) ? 'lower' : /[A-Z]/.test(c) ? 'upper' : c);
        expect(kind(p[i]!)).toBe(kind(secret[i]!));
      }
    }
    expect(script.placeholder('9f86d081884c7d659a2feaa0c55ad015')).toMatch(/^[0-9a-f]+$/);
    expect(script.placeholder('JBSWY3DPEHPK3PXP')).toMatch(/^[A-Z2-7]+$/);
  });

  it('replaces keys, signing secrets, tokens, TOTP secrets, passwords and full account numbers; ids, dates and masked numbers stay', () => {
    const key = 'wk_test_emytJWVwfj44qdJIIoXXGvSioS0CGifniJpNAVD3';
    const answer = {
      id: 'f20488db-5b69-47e8-b483-9e1d65e89d0b',
      key,
      prefix: key.slice(0, 12),
      createdAt: '2026-11-29T02:49:11.234911Z',
      secret: 'whsec_MfKQ9r8GKYqrTwjUPD8ILPZIo2LaLaSw',
      token: 'wsess_3b1f0c9e8d7a6b5c4d3e2f1a0b9c8d7e',
      invitationUrl: 'http://localhost:8080/dashboard/invitation#winv_Q2hhbmdlTWVQbGVhc2U',
      totpSecret: 'JBSWY3DPEHPK3PXP',
      otpauthUrl: 'otpauth://totp/Wallet:ana%40example.com?secret=JBSWY3DPEHPK3PXP&issuer=Wallet',
      password: 'la clave de la prueba',
      destination: { bankAccount: { accountNumber: '30741852963', bankId: 1 } },
      account: '****2963',
    };
    const out = script.redact(answer);
    const text = JSON.stringify(out);
    for (const secret of [
      'emytJWVwfj44qdJIIoXXGvSioS0CGifniJpNAVD3',
      'MfKQ9r8GKYqrTwjUPD8ILPZIo2LaLaSw',
      '3b1f0c9e8d7a6b5c4d3e2f1a0b9c8d7e',
      'Q2hhbmdlTWVQbGVhc2U',
      'JBSWY3DPEHPK3PXP',
      'la clave de la prueba',
      '30741852963',
    ])
      expect(text).not.toContain(secret);
    expect(out.key).toMatch(/^wk_test_[A-Za-z0-9]{40}$/);
    expect(out.key.startsWith(out.prefix)).toBe(true);
    expect(out.secret).toMatch(/^whsec_/);
    expect(out.token).toMatch(/^wsess_[0-9a-f]{32}$/);
    expect(out.invitationUrl).toMatch(/^http:\/\/localhost:8080\/dashboard\/invitation#winv_/);
    expect(out.otpauthUrl).toBe(`otpauth://totp/Wallet:ana%40example.com?secret=${out.totpSecret}&issuer=Wallet`);
    expect(out.destination.bankAccount.accountNumber).toMatch(/^\d{11}$/);
    expect([out.id, out.createdAt, out.account, out.destination.bankAccount.bankId]).toEqual([answer.id, answer.createdAt, '****2963', 1]);
  });
});

describe('record-examples: choice', () => {
  it('per operation: the richest plain request and the answer it got; per other status the richest answer; stable order', () => {
    const lines: Candidate[] = [
      { operationId: 'sendTransfer', status: 201, file: 'b.test.ts', n: 0, request: { amount: 1 }, response: { id: 'small' } },
      { operationId: 'sendTransfer', status: 201, file: 'a.test.ts', n: 0, request: { amount: 2, description: 'Pago' }, response: { id: 'paired' } },
      {
        operationId: 'sendTransfer',
        status: 201,
        file: 'c.test.ts',
        n: 0,
        request: { amount: 3, description: 'Pago\u202e<script>' },
        response: { id: 'hostile' },
      },
      {
        operationId: 'sendTransfer',
        status: 201,
        file: 'documented-examples.test.ts',
        n: 0,
        request: { amount: 4, description: 'x', more: 1, evenMore: 2 },
        response: { id: 'echo' },
      },
      { operationId: 'sendTransfer', status: 400, file: 'a.test.ts', n: 0, response: { error: 'INVALID_REQUEST', message: 'La solicitud no es válida.' } },
      {
        operationId: 'sendTransfer',
        status: 400,
        file: 'z.test.ts',
        n: 1,
        response: { error: 'INVALID_REQUEST', message: 'La solicitud no es válida.', details: { fields: [{ path: 'amount', message: 'Requerido.' }] } },
      },
      { operationId: 'getOpenApiDocument', status: 200, file: 'a.test.ts', n: 0, response: { openapi: '3.1.0' } },
    ];
    const out = script.buildExamples(lines);
    expect(Object.keys(out)).toEqual(['sendTransfer']);
    expect(out.sendTransfer!.request).toEqual({ amount: 2, description: 'Pago' });
    expect(out.sendTransfer!.responses!['201']).toEqual({ id: 'paired' });
    expect(out.sendTransfer!.responses!['400'].details.fields).toHaveLength(1);
    expect(Object.keys(out.sendTransfer!.responses!['400'])).toEqual(['details', 'error', 'message']);
    // The same candidates in another order give the same file.
    expect(JSON.stringify(script.buildExamples([...lines].reverse()))).toBe(JSON.stringify(out));
  });
});
