// What the scale benches share (test/bench/scale.mjs: the ledger; scale-deposits.mjs: the deposits listing):
// the repository's built modules, whole-number settings from the environment, and the scratch database each
// fills (created unless reused, dropped at the end unless kept).
import { dirname, join } from 'node:path';
import { fileURLToPath, pathToFileURL } from 'node:url';
import pg from 'pg';

const root = join(dirname(fileURLToPath(import.meta.url)), '..', '..');

/** A module of the repository, by its path from the root (a service's built `dist`). */
export const imp = (p) => import(pathToFileURL(join(root, p)).href);

/** A whole number (0 or more) from the environment, or the default. */
export const int = (name, dflt) => {
  const v = Number(process.env[name] ?? dflt);
  if (!Number.isInteger(v) || v < 0) throw new Error(`${name} must be a whole number (got ${process.env[name]})`);
  return v;
};

/**
 * The bench's database: `reuse` (a kept one, measured again) or a new `<prefix>_<pid>`. `done()` drops it
 * unless `keep`, and closes the admin connection.
 */
export async function scratchDatabase({ prefix, reuse, keep }) {
  const base = process.env.DATABASE_URL ?? 'postgresql://postgres@127.0.0.1:5432/postgres';
  const name = reuse ?? `${prefix}_${process.pid}`;
  const url = new URL(base);
  url.pathname = `/${name}`;
  const admin = new pg.Client({ connectionString: base });
  await admin.connect();
  if (!reuse) await admin.query(`create database ${name}`);
  return {
    name,
    url: url.toString(),
    async done() {
      if (!keep) await admin.query(`drop database if exists ${name} with (force)`);
      await admin.end();
    },
  };
}
