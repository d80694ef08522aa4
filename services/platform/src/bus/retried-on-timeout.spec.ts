import { retriedOnTimeout } from './bus.js';

describe('retriedOnTimeout: an idempotent JetStream step asked again when it is not answered', () => {
  const timeout = () => Object.assign(new Error('timeout'), { name: 'TimeoutError' });

  it('asks again after a time-out, and answers what the step answers once it gets through', async () => {
    let calls = 0;
    await expect(
      retriedOnTimeout(async () => {
        calls++;
        if (calls < 3) throw timeout();
        return 'made';
      }),
    ).resolves.toBe('made');
    expect(calls).toBe(3);
  });

  it('gives up after the fourth time-out, with the time-out', async () => {
    let calls = 0;
    await expect(
      retriedOnTimeout(async () => {
        calls++;
        throw timeout();
      }),
    ).rejects.toMatchObject({ name: 'TimeoutError' });
    expect(calls).toBe(4);
  }, 15_000);

  it('throws any other error at once (a refused configuration is not asked again)', async () => {
    let calls = 0;
    await expect(
      retriedOnTimeout(async () => {
        calls++;
        throw new Error('consumer filter subject is not a valid subset of the interest subjects');
      }),
    ).rejects.toThrow('not a valid subset');
    expect(calls).toBe(1);
  });
});
