import { withTimeout } from './with-timeout.js';

describe('withTimeout', () => {
  it('answers what the promise answers when it settles in time', async () => {
    await expect(withTimeout(Promise.resolve('ok'), 1_000)).resolves.toBe('ok');
    await expect(withTimeout(Promise.reject(new Error('refused')), 1_000)).rejects.toThrow('refused');
  });

  it("rejects with 'timeout' when it does not", async () => {
    await expect(withTimeout(new Promise(() => undefined), 20)).rejects.toThrow('timeout');
  });
});
