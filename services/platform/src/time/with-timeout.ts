/**
 * `p`, or a rejection with `Error('timeout')` once `ms` have passed without it settling: for a call whose answer is
 * only worth waiting for so long (a readiness check, a scrape, a JetStream info). The timer never keeps the process
 * alive and is cleared as soon as `p` settles; `p` itself goes on (nothing here cancels it).
 */
export function withTimeout<T>(p: Promise<T>, ms: number): Promise<T> {
  let timer: NodeJS.Timeout | undefined;
  const expired = new Promise<never>((_, reject) => {
    timer = setTimeout(() => reject(new Error('timeout')), ms);
    timer.unref();
  });
  return Promise.race([p, expired]).finally(() => clearTimeout(timer));
}
