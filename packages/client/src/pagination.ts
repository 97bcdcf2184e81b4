// Every list endpoint answers {data, has_more, next_cursor}. A PageList walks
// them: `for await` yields every item across pages, fetching the next page
// only when the previous one is used up; `.page()` fetches just one.

export interface Page<T> {
  data: T[];
  has_more: boolean;
  next_cursor: string | null;
}

export type PageParams = {
  /** Items per page, 1–100 (the API's default is 20). */
  limit?: number;
  /** The last id of the previous page (its next_cursor). */
  starting_after?: string;
};

export type PageFetcher<T, P extends PageParams> = (params: P) => Promise<Page<T>>;

export class PageList<T, P extends PageParams = PageParams> implements AsyncIterable<T> {
  constructor(
    private readonly fetchPage: PageFetcher<T, P>,
    private readonly params: P,
  ) {
    if (params.limit !== undefined && (!Number.isInteger(params.limit) || params.limit < 1 || params.limit > 100)) {
      throw new TypeError(`limit must be a whole number from 1 to 100, got ${String(params.limit)}`);
    }
  }

  /** One page: the first, or the one after `startingAfter` (a previous page's next_cursor). */
  page(startingAfter?: string): Promise<Page<T>> {
    return this.fetchPage(
      startingAfter === undefined ? this.params : { ...this.params, starting_after: startingAfter },
    );
  }

  async *[Symbol.asyncIterator](): AsyncIterator<T> {
    let cursor = this.params.starting_after;
    for (;;) {
      const page = await this.page(cursor);
      yield* page.data;
      if (!page.has_more || !page.next_cursor) return;
      cursor = page.next_cursor;
    }
  }

  /** Every item of every page, in order (mind the size of what you list). */
  async toArray(): Promise<T[]> {
    const all: T[] = [];
    for await (const item of this) all.push(item);
    return all;
  }
}
