import { sqlInstant } from '@wallet/platform';

/** Anything that runs SQL: the Database (auto-commit) or a transaction handle. */
export interface Queryable {
  query<T = Record<string, unknown>>(sql: string, params?: readonly unknown[]): Promise<T[]>;
}

/** A timestamptz column as an Instant (RFC 3339 UTC, six fraction digits, exact), e.g. 2026-01-02T03:04:05.678912Z. */
export function isoCol(column: string, alias: string): string {
  return `case when ${column} is null then null else ${sqlInstant(column)} end as ${alias}`;
}
