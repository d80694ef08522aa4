/** Runs `fn` over `xs` with at most `n` at once, keeping the order of the results. */
export async function mapBounded<T, R>(xs: readonly T[], n: number, fn: (x: T, i: number) => Promise<R>): Promise<R[]> {
  const out = new Array<R>(xs.length);
  let next = 0;
  const worker = async () => {
    for (let i = next++; i < xs.length; i = next++) out[i] = await fn(xs[i]!, i);
  };
  await Promise.all(Array.from({ length: Math.min(n, xs.length) }, worker));
  return out;
}
