/**
 * A name list's page (`collections.list`, `branches.list`, `tags.list`) for a partial reader,
 * one the gate may not show the engine's page as it is (gate.ts). An engine page examines
 * `limit` rows, so with one-row pages the empty ones show where the names the caller may not
 * read sort among those it may. Whoever may create names in a list (a writer of one branch
 * tags it with any name; a collection's admin makes branches of any name) could place names of
 * its own among the hidden ones and, page after page, narrow each hidden name down.
 *
 * So such a page is filled: rows are read on past the hidden ones (in the engine's default
 * page size) until the page holds `limit` rows the caller may read and one more shows that
 * the list goes on, or the list ends. `denied` is 0 until the last page, which counts the
 * hidden rows of the whole list (the count so far travels in the sealed position). What a
 * page shows then depends only on the rows the caller may read and how many it may not; the
 * one exception is a page that examined NAME_SCAN_ROWS rows without filling, which ends there
 * (a run that long of hidden names), since a page's work must stay bounded.
 */

/** Rows a filled page examines at most; then it ends early, continuing where it stopped. */
export const NAME_SCAN_ROWS = 1_000;

export interface NamePage {
  readonly rows: readonly Record<string, unknown>[];
  /** The engine's position (a row's name), null on the last page. */
  readonly next: string | null;
}

export interface FilledPage {
  readonly rows: Record<string, unknown>[];
  /** Where the next page starts (a row's name, in clear: the gate seals it), or null. */
  readonly next: string | null;
  /** Rows denied before `next`, carried in the sealed position. */
  readonly carried: number;
  /** 0 but on the last page: the denied rows of the whole list. */
  readonly denied: number;
}

export interface NamePageSource {
  /** The engine's page the request itself read. */
  readonly first: NamePage;
  /** The request's `limit`, if it gave one (else the engine's default page size). */
  readonly limit: number | undefined;
  /** Rows denied before the request's position (from its sealed position). */
  readonly carried: number;
  /** Which rows the caller may read, in one batch. */
  allowed(rows: readonly Record<string, unknown>[]): Promise<boolean[]>;
  /** The engine's page after a position, in its default size. */
  after(name: string): Promise<NamePage>;
}

export async function fillNamePage(source: NamePageSource): Promise<FilledPage> {
  const { first } = source;
  // Without a limit the engine's default size applies: a first page that goes on is that long.
  const target =
    source.limit ?? (first.next === null ? Number.POSITIVE_INFINITY : first.rows.length);
  const rows: Record<string, unknown>[] = [];
  let carried = source.carried;
  let hidden = 0;
  let examined = 0;
  let page = first;
  for (;;) {
    const allowed = await source.allowed(page.rows);
    for (const [i, row] of page.rows.entries()) {
      if (allowed[i] !== true) {
        hidden++;
        continue;
      }
      // A row beyond a full page: the list goes on, from the page's last row.
      if (rows.length >= target) {
        return { rows, next: String(rows[rows.length - 1]!.name), carried, denied: 0 };
      }
      rows.push(row);
      carried += hidden;
      hidden = 0;
    }
    examined += page.rows.length;
    if (page.next === null) return { rows, next: null, carried: 0, denied: carried + hidden };
    if (examined >= NAME_SCAN_ROWS) {
      return { rows, next: page.next, carried: carried + hidden, denied: 0 };
    }
    page = await source.after(page.next);
  }
}
