/**
 * The row-level store both persistence backends offer, and the one way the shared domain code
 * (`sql/namespaces.ts`, `sql/runs.ts`, …) speaks to it. A unit of work is a generator that
 * yields statements and receives each one's result: the SQLite driver answers them
 * synchronously (its transactions never yield to the event loop, so two callers can never
 * interleave inside one, and its prepared statements are stepped directly), the PostgreSQL
 * driver answers them over a pooled connection with `await`. The domain code is written once,
 * as units, and does not know which driver runs it: the synchronous/asynchronous difference
 * lives in the two drivers, every SQL text difference in the `Dialect` (`dialect.ts`).
 *
 * Statements are written with `?` placeholders, never with a `?` inside a literal (the
 * PostgreSQL dialect numbers them).
 */

/** A bound value: text, a number, null, or (PostgreSQL arrays, see `Dialect.list`) an array. */
export type Param = string | number | bigint | null | readonly (string | number | null)[];

export type Statement =
  | {
      readonly kind: "all" | "get" | "run";
      readonly sql: string;
      readonly params: readonly Param[];
    }
  /** One statement run once per row of parameters, in order. */
  | { readonly kind: "each"; readonly sql: string; readonly rows: readonly (readonly Param[])[] }
  /** Several statements without parameters (schema changes). */
  | { readonly kind: "exec"; readonly sql: string };

/** A unit of work: yields statements, is sent each one's result, returns the unit's value. */
export type Unit<T> = Generator<Statement, T, unknown>;

/** Every row the statement returns. */
export function* all<R>(sql: string, params: readonly Param[] = []): Unit<R[]> {
  return (yield { kind: "all", sql, params }) as R[];
}

/** The statement's first row, undefined when it returns none. */
export function* get<R>(sql: string, params: readonly Param[] = []): Unit<R | undefined> {
  return (yield { kind: "get", sql, params }) as R | undefined;
}

/** Runs a write; returns how many rows it changed. */
export function* run(sql: string, params: readonly Param[] = []): Unit<number> {
  return (yield { kind: "run", sql, params }) as number;
}

/** Runs a write once per row of parameters; returns how many rows they changed in all. */
export function* runEach(sql: string, rows: readonly (readonly Param[])[]): Unit<number> {
  return (yield { kind: "each", sql, rows }) as number;
}

/** Runs parameterless statements (schema changes) as one script. */
export function* exec(sql: string): Unit<void> {
  yield { kind: "exec", sql };
}
