// The reconciliation engine's benchmark (phase `recon` of test/bench/run.mjs, or on its own):
//   node test/bench/recon.mjs [--lines 100000,1000000] [--heap-mib 128] [--json]
// For each size: a child process writes an ACH settlement report of that many lines (CSV, settlement
// order, as the sandbox serves it) to a temporary file, with a handful of planted breaks; a fresh child
// process then reconciles it against "our records" (generated in key order, as the owning service's
// ordered stream would deliver them) with the real engine (@wallet/reconciliation: csv-parse, the
// external sort on disk, the merge), checks that it found exactly the planted breaks, and reports
// lines/s, its peak RSS (getrusage maxRSS, and sampled) and the sort's runs. Nothing here is asserted
// about timing; a wrong set of breaks fails the run.
import { spawn } from 'node:child_process';
import { createWriteStream, mkdtempSync, rmSync, statSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';

const D = '2025-03-14';
const NEXT = '2025-03-15';
const RAIL = 'ach';
const DAY_START = Date.parse(`${D}T05:00:00.000Z`); // 00:00 in Bogotá

function gcd(a, b) {
  while (b) [a, b] = [b, a % b];
  return a;
}
function modInverse(a, n) {
  let [t, newT, r, newR] = [0n, 1n, BigInt(n), BigInt(a)];
  while (newR !== 0n) {
    const q = r / newR;
    [t, newT] = [newT, t - q * newT];
    [r, newR] = [newR, r - q * newR];
  }
  return Number(((t % BigInt(n)) + BigInt(n)) % BigInt(n));
}

/** Everything both children derive from N alone: the order of the report and the planted breaks. */
export function plan(n) {
  let a = 7919;
  while (gcd(a, n) !== 1) a += 2;
  const aInv = modInverse(a, n);
  const pick = (k) => [1, 2, 3].map((m) => Math.floor((n * (k * 3 + m)) / 19) % n);
  const p = {
    n,
    a,
    aInv,
    missingAtProvider: new Set(pick(0)),
    amount: new Set(pick(1)),
    status: new Set(pick(2)),
    duplicate: new Set(pick(3)),
    valueDate: new Set(pick(4)),
    unknownIds: ['tx-zz-extra-1', 'tx-zz-extra-2'],
    unidentified: 'ach_unidentified_0001',
    previousDay: ['tx-prev-1', 'tx-prev-2'],
  };
  const all = [p.missingAtProvider, p.amount, p.status, p.duplicate, p.valueDate].flatMap((s) => [...s]);
  if (new Set(all).size !== all.length) throw new Error(`planted positions collide for n=${n}`);
  return p;
}
const ourId = (j) => `tx-${String(j).padStart(10, '0')}`;
const providerId = (j) => `ach_${j.toString(16).padStart(24, '0')}`;
const amount = (j) => 1_000 + ((j * 7) % 500_000);
const statusOf = (j) => (j % 10 === 3 ? 'FAILED' : 'COMPLETED');
const at = (n, i) => new Date(DAY_START + Math.floor((i * 86_400_000) / n)).toISOString();
const positionOf = (p, j) => (j * p.aInv) % p.n; // the report position of our record j

/** The breaks the engine must find, as keys. */
function expectedKeys(p) {
  const k = (kind, ref) => `${RAIL}:${D}:${kind}:${ref}`;
  return [
    ...[...p.missingAtProvider].map((j) => k('missing_at_provider', ourId(j))),
    ...[...p.amount].map((j) => k('amount_mismatch', providerId(j))),
    ...[...p.status].map((j) => k('status_mismatch', providerId(j))),
    ...[...p.duplicate].map((j) => k('duplicate', providerId(j))),
    ...[...p.valueDate].map((j) => k('value_date_mismatch', providerId(j))),
    ...p.unknownIds.map((_, x) => k('missing_in_our_books', `ach_extra_${x}`)),
    k('missing_in_our_books', p.unidentified),
    ...p.previousDay.map((_, x) => k('value_date_mismatch', `ach_prev_${x}`)),
  ].sort();
}

// ---- child: generate ---------------------------------------------------------------------------
async function generate(file, n) {
  const p = plan(n);
  const out = createWriteStream(file);
  let buf = 'provider_id,our_id,direction,amount_cents,fee_cents,status,value_date,accepted_at,settled_at,counterparty\r\n';
  let lines = 0,
    sum = 0n;
  const line = (pid, oid, amt, status, valueDate, settled) => {
    const accepted = new Date(Date.parse(settled) - 3000).toISOString();
    buf += `${pid},${oid},OUT,${amt},0,${status},${valueDate},${accepted},${settled},1007 ****${String(amt % 10_000).padStart(4, '0')}\r\n`;
    lines += 1;
    sum += BigInt(amt);
  };
  const extrasAt = new Map([
    [Math.floor(n / 3), 0],
    [Math.floor((2 * n) / 3), 1],
  ]);
  for (let i = 0; i < n; i++) {
    if (i === 0) p.previousDay.forEach((id, x) => line(`ach_prev_${x}`, id, 77_000 + x, 'COMPLETED', D, at(n, 0))); // moved in from yesterday
    const j = (i * p.a) % n;
    const extra = extrasAt.get(i);
    if (extra !== undefined) line(`ach_extra_${extra}`, p.unknownIds[extra], 100_000, 'COMPLETED', D, at(n, i));
    if (i === Math.floor(n / 2)) line(p.unidentified, '', 55_500, 'COMPLETED', D, at(n, i));
    if (!p.missingAtProvider.has(j)) {
      const amt = amount(j) + (p.amount.has(j) ? 100 : 0);
      const status = p.status.has(j) ? (statusOf(j) === 'FAILED' ? 'COMPLETED' : 'FAILED') : statusOf(j);
      const valueDate = p.valueDate.has(j) ? NEXT : D;
      for (let c = p.duplicate.has(j) ? 2 : 1; c > 0; c--) line(providerId(j), ourId(j), amt, status, valueDate, at(n, i));
    }
    if (buf.length >= 1 << 20) {
      if (!out.write(buf)) await new Promise((r) => out.once('drain', r));
      buf = '';
    }
  }
  buf += `TRAILER,${lines},${sum},0\r\n`;
  await new Promise((resolve, reject) => {
    out.once('error', reject);
    out.end(buf, resolve);
  });
  return { lines, bytes: statSync(file).size };
}

// ---- child: reconcile --------------------------------------------------------------------------
/** Our records in key order, in batches of 1,000, made as the stream is read (nothing held). */
function ourRecords(p) {
  const prev = new Map(
    p.previousDay.map((id, x) => [
      id,
      {
        ourId: id,
        providerId: `ach_prev_${x}`,
        status: 'COMPLETED',
        amountCents: BigInt(77_000 + x),
        settledAt: new Date(DAY_START - 60_000).toISOString(),
      },
    ]),
  );
  return {
    async *settled(rail, date) {
      if (rail !== RAIL || date !== D) return;
      for (let start = 0; start < p.n; start += 1000) {
        const batch = [];
        for (let j = start; j < Math.min(p.n, start + 1000); j++) {
          batch.push({ ourId: ourId(j), providerId: providerId(j), status: statusOf(j), amountCents: BigInt(amount(j)), settledAt: at(p.n, positionOf(p, j)) });
        }
        yield batch;
      }
    },
    async find(rail, ids) {
      return ids.flatMap((id) => (prev.has(id) ? [prev.get(id)] : []));
    },
  };
}

async function reconcileChild(file, n, dir) {
  const { reconcile, fileReportRecords, SpillSorter } = await import('@wallet/reconciliation');
  const { InMemoryBreakSink } = await import('@wallet/reconciliation/testing');
  const p = plan(n);
  const baseRss = process.memoryUsage().rss;
  let sampledPeak = baseRss;
  let heapPeak = 0;
  let tick = 0;
  const sampler = setInterval(() => {
    sampledPeak = Math.max(sampledPeak, process.memoryUsage.rss());
    if (tick++ % 5 === 0) heapPeak = Math.max(heapPeak, process.memoryUsage().heapUsed); // the full figure walks the heap: less often
  }, 50);
  const sink = new InMemoryBreakSink();
  let sorter;
  const cpu0 = process.cpuUsage();
  const t0 = performance.now();
  const result = await reconcile(RAIL, D, fileReportRecords(file), {
    ours: ourRecords(p),
    sink,
    sorter: () => (sorter = new SpillSorter({ dir })),
  });
  const seconds = (performance.now() - t0) / 1000;
  const cpu = process.cpuUsage(cpu0);
  clearInterval(sampler);
  const expected = expectedKeys(p);
  const found = sink.keys();
  const ok = result.outcome === 'RECONCILED' && JSON.stringify(found) === JSON.stringify(expected);
  return {
    lines: result.outcome === 'RECONCILED' ? result.report.lines : 0,
    seconds: +seconds.toFixed(2),
    linesPerSecond: result.outcome === 'RECONCILED' ? Math.round(result.report.lines / seconds) : 0,
    cpuUsPerLine: result.outcome === 'RECONCILED' ? +((cpu.user + cpu.system) / result.report.lines).toFixed(1) : 0,
    peakRssMiB: Math.round(process.resourceUsage().maxRSS / 1024),
    sampledPeakRssMiB: Math.round(sampledPeak / 2 ** 20),
    baseRssMiB: Math.round(baseRss / 2 ** 20),
    peakHeapMiB: Math.round(heapPeak / 2 ** 20),
    runs: sorter?.spilledRuns ?? 0,
    outcome: result.outcome,
    matched: result.outcome === 'RECONCILED' ? result.matched.count : 0,
    breaks: result.outcome === 'RECONCILED' ? result.breaks.byKind : result,
    breaksOk: ok,
    ...(ok ? {} : { expected, found }),
  };
}

// ---- orchestration -----------------------------------------------------------------------------
const self = fileURLToPath(import.meta.url);
function child(args, nodeFlags = []) {
  return new Promise((resolve, reject) => {
    const c = spawn(process.execPath, [...nodeFlags, self, ...args], { stdio: ['ignore', 'pipe', 'inherit'] });
    let out = '';
    c.stdout.on('data', (d) => {
      out += d;
    });
    c.on('error', reject);
    c.on('exit', (code) => (code === 0 ? resolve(JSON.parse(out.trim().split('\n').at(-1))) : reject(new Error(`${args[0]} exited ${code}`))));
  });
}

/**
 * Generates and reconciles a report of each size (one fresh process each); returns the figures.
 * The reconciling process runs with its V8 heap capped (`heapMiB`, 0 = no cap): a design that held
 * the report in memory would run out of heap there, so the cap turns "bounded memory" into a
 * pass/fail fact rather than a reading of V8's lazy collection.
 */
export async function runReconBench(sizes, log = () => {}, { heapMiB = 128 } = {}) {
  const dir = mkdtempSync(join(tmpdir(), 'wallet-bench-recon-'));
  const rows = [];
  try {
    for (const n of sizes) {
      const file = join(dir, `ach-${n}.csv`);
      const g0 = performance.now();
      const gen = await child(['generate', file, String(n)]);
      log(
        `recon: wrote a ${n.toLocaleString('en')}-line report (${gen.lines.toLocaleString('en')} lines with the planted ones, ${(gen.bytes / 1e6).toFixed(0)} MB) in ${((performance.now() - g0) / 1000).toFixed(1)} s`,
      );
      const r = { heapCapMiB: heapMiB || null, ...(await child(['reconcile', file, String(n), dir], heapMiB ? [`--max-old-space-size=${heapMiB}`] : [])) };
      rmSync(file, { force: true });
      log(
        `recon: ${r.lines.toLocaleString('en')} lines in ${r.seconds} s = ${r.linesPerSecond.toLocaleString('en')} lines/s, ${r.cpuUsPerLine} CPU µs/line; peak RSS ${r.peakRssMiB} MiB ` +
          `(at start ${r.baseRssMiB}; peak heap ${r.peakHeapMiB} MiB${heapMiB ? `, heap capped at ${heapMiB} MiB` : ''}); ${r.runs} sorted runs; breaks ${JSON.stringify(r.breaks)} ${r.breaksOk ? '= the planted ones' : 'DIFFER from the planted ones'}`,
      );
      rows.push({ n, bytes: gen.bytes, ...r });
    }
  } finally {
    rmSync(dir, { recursive: true, force: true });
  }
  return rows;
}

const [mode, ...rest] = process.argv.slice(2);
if (process.argv[1] === self) {
  if (mode === 'generate') {
    console.log(JSON.stringify(await generate(rest[0], Number(rest[1]))));
  } else if (mode === 'reconcile') {
    console.log(JSON.stringify(await reconcileChild(rest[0], Number(rest[1]), rest[2])));
  } else {
    const arg = (name, dflt) => {
      const i = process.argv.indexOf(name);
      return i > 0 ? process.argv[i + 1] : dflt;
    };
    const sizes = arg('--lines', '100000,1000000').split(',').map(Number);
    const heapMiB = Number(arg('--heap-mib', '128'));
    const rows = await runReconBench(sizes, (m) => console.error(`[recon ${new Date().toISOString().slice(11, 19)}] ${m}`), { heapMiB });
    if (process.argv.includes('--json')) console.log(JSON.stringify(rows));
    else console.table(rows.map(({ expected: _e, found: _f, breaks: _b, ...r }) => r));
    if (rows.some((r) => !r.breaksOk)) process.exitCode = 1;
  }
}
