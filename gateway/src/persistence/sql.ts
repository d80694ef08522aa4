/** Anything that runs SQL: the Database (auto-commit) or a transaction handle. */
export interface Queryable {
  query<T = Record<string, unknown>>(sql: string, params?: readonly unknown[]): Promise<T[]>;
}

/** A timestamptz column rendered as ISO 8601 UTC with milliseconds, e.g. 2026-01-02T03:04:05.678Z. */
export function isoCol(column: string, alias: string): string {
  return `case when ${column} is null then null else to_char(${column} at time zone 'UTC', 'YYYY-MM-DD"T"HH24:MI:SS.MS"Z"') end as ${alias}`;
}
