import { retryDelayMs, signCallback, verifyCallbackSignature } from './callbacks.js';
import { amountOutcome } from './rails.js';

describe('callbacks', () => {
  it('signs t.rawBody with HMAC-SHA256', () => {
    // echo -n '1700000000.{"a":1}' | openssl dgst -sha256 -hmac secret
    expect(signCallback('secret', '{"a":1}', 1_700_000_000)).toBe('t=1700000000,v1=49f24e537407743fa4a0242bb63b94b9a47ee99cbbe071ccd8a22550ae411686');
    const header = signCallback('secret', '{"a":1}', 1_700_000_000);
    expect(verifyCallbackSignature('secret', '{"a":1}', header, 1_700_000_100)).toBe(true);
    expect(verifyCallbackSignature('secret', '{"a":2}', header, 1_700_000_100)).toBe(false);
    expect(verifyCallbackSignature('other', '{"a":1}', header, 1_700_000_100)).toBe(false);
    expect(verifyCallbackSignature('secret', '{"a":1}', header, 1_700_000_301)).toBe(false);
    expect(verifyCallbackSignature('secret', '{"a":1}', undefined, 1_700_000_000)).toBe(false);
  });

  it('backs off 1 s, 2 s, 4 s … up to 60 s', () => {
    const p = { baseMs: 1000, maxMs: 60_000 };
    expect([1, 2, 3, 4, 5, 6, 7, 8, 50].map((n) => retryDelayMs(n, p))).toEqual([1000, 2000, 4000, 8000, 16_000, 32_000, 60_000, 60_000, 60_000]);
  });

  it('fails amounts ending in 13 centavos', () => {
    expect(amountOutcome(13n).status).toBe('FAILED');
    expect(amountOutcome(100_013n).status).toBe('FAILED');
    expect(amountOutcome(1_300n).status).toBe('COMPLETED');
    expect(amountOutcome(114n).status).toBe('COMPLETED');
  });
});
