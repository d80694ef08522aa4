/** One page of a cursor listing. */
export interface Page<T> {
  items: T[];
  /** Pass back to get the next page; null on the last one. */
  nextCursor: string | null;
}

/**
 * A cursor listing as an async iterable: `for await (const item of list)` walks every item, fetching
 * pages as it goes (each page through the client's timeouts and retries); `pages()` walks the pages.
 * Nothing is fetched until iteration starts, and each iteration starts again from the first page.
 */
export class Paginator<T> implements AsyncIterable<T> {
  constructor(private readonly fetchPage: (cursor: string | undefined) => Promise<Page<T>>) {}

  async *pages(): AsyncGenerator<Page<T>, void, undefined> {
    let cursor: string | undefined;
    const seen = new Set<string>();
    for (;;) {
      const page = await this.fetchPage(cursor);
      yield page;
      if (!page.nextCursor) return;
      // A cursor handed back twice would loop for ever: stop instead of hammering the API.
      if (seen.has(page.nextCursor)) throw new Error(`the API returned the cursor ${page.nextCursor} twice`);
      seen.add(page.nextCursor);
      cursor = page.nextCursor;
    }
  }

  async *[Symbol.asyncIterator](): AsyncGenerator<T, void, undefined> {
    for await (const page of this.pages()) yield* page.items;
  }

  /** Up to `max` items (default: all) in an array. */
  async toArray(max = Infinity): Promise<T[]> {
    const out: T[] = [];
    if (max <= 0) return out;
    for await (const item of this) {
      out.push(item);
      if (out.length >= max) break;
    }
    return out;
  }
}
