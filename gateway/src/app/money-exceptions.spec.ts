import type { CallContext } from '@wallet/platform';
import type { exceptionsV1 } from '@wallet/proto';
import { MoneyExceptions } from './money-exceptions.js';

/**
 * MoneyExceptions.find: one question per owner (ListExceptions by `id`), and, for an owner from before that
 * filter (it answers its listing instead), a look through its pages, so a rolling upgrade never reads an
 * exception as missing.
 */
type Lister = { listExceptions(req: exceptionsV1.ListExceptionsRequest, call: CallContext): Promise<exceptionsV1.ListExceptionsResponse> };

const exc = (n: number) => ({ id: `exc_${n.toString(16).padStart(32, '0')}` }) as exceptionsV1.MoneyException;
const call = {} as CallContext;

/** An owner keeping `ids` (newest first); `filters`: whether it knows ListExceptions' `id`. */
function owner(ids: number[], filters: boolean) {
  const asked: exceptionsV1.ListExceptionsRequest[] = [];
  const lister: Lister = {
    async listExceptions(req) {
      asked.push(req);
      let rows = ids.map(exc);
      if (filters && req.id !== undefined) rows = rows.filter((e) => e.id === req.id);
      const from = req.cursor ? Number(req.cursor) : 0;
      const page = rows.slice(from, from + (req.limit || 50));
      const next = from + page.length < rows.length ? String(from + page.length) : undefined;
      return { items: page, ...(next ? { nextCursor: next } : {}) };
    },
  };
  return { lister, asked };
}

const service = (o: Record<'transfers' | 'deposits' | 'recon', Lister>) =>
  new MoneyExceptions(o as unknown as ConstructorParameters<typeof MoneyExceptions>[0], { rerunDeadlineMs: 1_000 });

describe('MoneyExceptions.find', () => {
  it('asks each owner for the id alone: one call each, the keeper answers it', async () => {
    const [t, d, r] = [owner([1, 2, 3], true), owner([10, 11], true), owner([20], true)];
    const found = await service({ transfers: t.lister, deposits: d.lister, recon: r.lister }).find(exc(11).id, call);
    expect(found?.id).toBe(exc(11).id);
    for (const o of [t, d, r]) expect(o.asked).toEqual([{ limit: 1, id: exc(11).id }]);
    expect(await service({ transfers: t.lister, deposits: d.lister, recon: r.lister }).find(exc(99).id, call)).toBeUndefined();
  });

  it('an owner that ignores the filter (older) is looked through page by page, to the exception or to its end', async () => {
    const older = owner(
      Array.from({ length: 250 }, (_, i) => 1000 + i),
      false,
    );
    const [d, r] = [owner([], true), owner([20], true)];
    const svc = service({ transfers: older.lister, deposits: d.lister, recon: r.lister });
    expect((await svc.find(exc(1240).id, call))?.id).toBe(exc(1240).id);
    // its first answer (a page of others), then its pages of 100 until the one holding it
    expect(older.asked.map((q) => [q.limit, q.cursor ?? null])).toEqual([
      [1, null],
      [100, null],
      [100, '100'],
      [100, '200'],
    ]);
    expect(await svc.find(exc(7).id, call)).toBeUndefined();
    // the exception kept by a filtering owner is found whatever the older one answers
    expect((await svc.find(exc(20).id, call))?.id).toBe(exc(20).id);
  });

  it('an owner that cannot answer fails the look-up only when no other keeps the exception', async () => {
    const down: Lister = { listExceptions: () => Promise.reject(new Error('unavailable')) };
    const d = owner([10], true);
    const r = owner([], true);
    const svc = service({ transfers: down, deposits: d.lister, recon: r.lister });
    expect((await svc.find(exc(10).id, call))?.id).toBe(exc(10).id);
    await expect(svc.find(exc(11).id, call)).rejects.toThrow('unavailable');
  });
});
