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

/** p50, p99 and max (ms, 3 decimals) of a list of timings, and how many. */
export function quantiles(ms) {
  const s = [...ms].sort((a, b) => a - b);
  const q = (p) => +s[Math.min(s.length - 1, Math.floor(p * s.length))].toFixed(3);
  return { p50: q(0.5), p99: q(0.99), max: +s.at(-1).toFixed(3), n: s.length };
}

/**
 * A timer of labelled reads into `out`: each `run(label, call, calls)` warms up (the pool, the plan cache, the
 * buffers), then times up to `calls` calls (at least 20, then no longer than `labelSeconds`), and logs the figure.
 */
export function timedRuns(out, { samples, labelSeconds, say }) {
  return async (label, call, calls = samples) => {
    for (let i = 0; i < Math.min(50, Math.ceil(calls / 4)); i++) await call(i);
    const ms = [];
    const stop = performance.now() + labelSeconds * 1000;
    for (let i = 0; i < calls && (i < 20 || performance.now() < stop); i++) {
      const t0 = performance.now();
      await call(i);
      ms.push(performance.now() - t0);
    }
    out[label] = quantiles(ms);
    say(`  ${label}: ${JSON.stringify(out[label])}`);
  };
}
