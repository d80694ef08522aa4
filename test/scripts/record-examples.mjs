// npm run openapi:examples: the examples of the OpenAPI document, taken from real answers. Runs the
// e2e suites (test/e2e) with OPENAPI_RECORD_EXAMPLES set, so test/support/openapi-check.ts keeps the
// JSON bodies of the answers it checks (and, for 2xx answers, the JSON request the test sent), then
// picks one request per operation and one answer per operation and status, redacts the secrets and
// writes gateway/src/openapi/examples.json (sorted keys, pretty), which the document builder attaches
// (gateway/src/openapi/examples.ts) and gateway/src/openapi/examples.spec.ts checks against the schemas.
//
// Usage: node test/scripts/record-examples.mjs [e2e file names…] [--from <dir>] [--keep]
//   no file names: every e2e suite; --from: pick from the candidates of an earlier run (no tests);
//   --keep: leave the candidates' directory for a later --from.
// Needs the built workspaces (npm run openapi:examples builds first) and the test servers.
import { spawnSync } from 'node:child_process';
import { existsSync, mkdtempSync, readFileSync, readdirSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { dirname, join } from 'node:path';
import { fileURLToPath } from 'node:url';

const root = join(dirname(fileURLToPath(import.meta.url)), '..', '..');
const OUT = join(root, 'gateway/src/openapi/examples.json');

/** Documents served whole: an example of them would be the document again. */
const NOT_RECORDED = new Set(['getOpenApiDocument', 'getAsyncApiDocument']);
/** The suite that sends the documented examples back: its requests are the examples themselves, not a source of them. */
const NOT_A_SOURCE = new Set(['documented-examples.test.ts']);

// ---- Redaction ---------------------------------------------------------------------------------

/**
 * A placeholder of the same length and alphabet as a secret: each character is replaced by one of
 * its own class chosen by its position only, so the same secret length always gives the same text
 * (the file does not change between runs for that) and a key's displayed prefix stays the prefix
 * of the redacted key.
 */
export function placeholder(secret) {
  const hex = /^[0-9a-f]+$/.test(secret);
  const base32 = /^[A-Z2-7]+=*$/.test(secret);
  const lower = hex ? 'abcdef' : 'abcdefghijklmnopqrstuvwxyz';
  const digits = base32 ? '234567' : '0123456789';
  const upper = 'ABCDEFGHIJKLMNOPQRSTUVWXYZ';
  // A fixed pseudo-random index per position (an integer hash of it), the same on every run.
  const at = (i, n) => {
    let h = Math.imul(i + 0x9e3779b9, 0x85ebca6b) >>> 0;
    h = Math.imul(h ^ (h >>> 13), 0xc2b2ae35) >>> 0;
    return ((h ^ (h >>> 16)) >>> 0) % n;
  };
  return [...secret]
    .map((c, i) => {
      if (c >= '0' && c <= '9') return digits[at(i, digits.length)];
      if (c >= 'a' && c <= 'z') return lower[at(i + 1000, lower.length)];
      if (c >= 'A' && c <= 'Z') return upper[at(i + 2000, upper.length)];
      return c;
    })
    .join('');
}

/** Raw API keys, webhook signing secrets, session, operator, invitation and enrolment tokens. */
const TOKEN = /\b(wk_(?:test|live)_|whsec_|wsess_|wadm_|winv_|wenr_)([A-Za-z0-9+/_-]+={0,2})/g;
const OTPAUTH_SECRET = /([?&]secret=)([A-Za-z2-7]+)/g;
const PASSWORD = 'Clave-De-Ejemplo-2026';

/** The body with every secret replaced by a realistic placeholder (ids and dates stay as answered). */
export function redact(value, key = '') {
  if (Array.isArray(value)) return value.map((v) => redact(v, key));
  if (value && typeof value === 'object') return Object.fromEntries(Object.entries(value).map(([k, v]) => [k, redact(v, k)]));
  if (typeof value !== 'string') return value;
  if (/password/i.test(key)) return PASSWORD;
  // A full account number (the API answers it masked, ****1234, everywhere it answers one).
  if (/^accountNumber$/i.test(key) && /^\d+$/.test(value)) return placeholder(value);
  let out = value.replace(TOKEN, (_, prefix, rest) => prefix + placeholder(rest));
  // A secret or token of no known prefix (a TOTP secret): all of it.
  if (out === value && /(secret|token)$/i.test(key)) return placeholder(value);
  if (out.startsWith('otpauth://')) out = out.replace(OTPAUTH_SECRET, (_, p, s) => p + placeholder(s));
  return out;
}

// ---- Choice ------------------------------------------------------------------------------------

/** Text a reader would take for realistic: printable Latin-1 and common typography (hostile inputs are left out). */
const PLAIN = /^[\x20-\x7e\u00a0-\u00ff\u2013\u2014\u2018\u2019\u201c\u201d\u2026\n]*$/;

function plain(value) {
  if (typeof value === 'string') return PLAIN.test(value) && value.length <= 2000;
  if (Array.isArray(value)) return value.every(plain);
  if (value && typeof value === 'object') return Object.entries(value).every(([k, v]) => PLAIN.test(k) && plain(v));
  return true;
}

/** How much a body shows: its fields with a value (null and empty arrays count for nothing). */
function richness(value) {
  if (Array.isArray(value)) return value.reduce((n, v) => n + richness(v), 0);
  if (value && typeof value === 'object') return Object.values(value).reduce((n, v) => n + (v === null ? 0 : 1 + richness(v)), 0);
  return 0;
}

/** The candidate whose picked body is the richest and plain; ties go to the test file first by name, then the first seen there. */
function choose(candidates, pick) {
  const usable = candidates.filter((c) => plain(pick(c)) && (c.response === undefined || plain(c.response)));
  usable.sort((a, b) => richness(pick(b)) - richness(pick(a)) || a.file.localeCompare(b.file) || a.n - b.n);
  return usable[0];
}

/** Keys sorted at every depth, so the file is stable. */
function sorted(value) {
  if (Array.isArray(value)) return value.map(sorted);
  if (value && typeof value === 'object')
    return Object.fromEntries(
      Object.keys(value)
        .sort()
        .map((k) => [k, sorted(value[k])]),
    );
  return value;
}

export function buildExamples(lines) {
  const byOperation = new Map();
  for (const l of lines) {
    if (NOT_RECORDED.has(l.operationId) || NOT_A_SOURCE.has(l.file)) continue;
    const list = byOperation.get(l.operationId) ?? [];
    list.push(l);
    byOperation.set(l.operationId, list);
  }
  const out = {};
  for (const [operationId, list] of byOperation) {
    const entry = {};
    // The request, and the answer it got: the request and its status's answer come from one exchange.
    const asked = choose(
      list.filter((c) => c.request !== undefined),
      (c) => c.request,
    );
    if (asked) entry.request = redact(asked.request);
    const responses = {};
    for (const status of [...new Set(list.map((c) => c.status))].sort((a, b) => a - b)) {
      const answered =
        asked?.status === status && asked.response !== undefined
          ? asked
          : choose(
              list.filter((c) => c.status === status && c.response !== undefined),
              (c) => c.response,
            );
      // An error that says no more than the catalogue ({ error, message }) is left to the catalogue's example.
      const bare = status >= 400 && answered && Object.keys(answered.response ?? {}).every((k) => k === 'error' || k === 'message');
      if (answered && !bare) responses[String(status)] = redact(answered.response);
    }
    if (Object.keys(responses).length) entry.responses = responses;
    if (Object.keys(entry).length) out[operationId] = entry;
  }
  return sorted(out);
}

// ---- Run ---------------------------------------------------------------------------------------

function readCandidates(dir) {
  const lines = [];
  for (const f of readdirSync(dir).filter((n) => n.startsWith('examples-') && n.endsWith('.jsonl'))) {
    for (const line of readFileSync(join(dir, f), 'utf8').split('\n')) if (line) lines.push(JSON.parse(line));
  }
  return lines;
}

function main() {
  const args = process.argv.slice(2);
  const fromAt = args.indexOf('--from');
  const from = fromAt >= 0 ? args[fromAt + 1] : undefined;
  const keep = args.includes('--keep');
  const files = args.filter((a, i) => !a.startsWith('--') && (fromAt < 0 || i !== fromAt + 1));
  const started = Date.now();
  let dir = from;
  let status = 0;
  if (!dir) {
    dir = mkdtempSync(join(tmpdir(), 'openapi-examples-'));
    const patterns = files.length ? files.map((f) => `e2e/${f.replace(/^.*\//, '')}`) : ['e2e/'];
    console.log(`[examples] recording answers of ${files.length ? files.join(', ') : 'every e2e suite'} into ${dir}`);
    const r = spawnSync(
      process.execPath,
      ['--experimental-vm-modules', '--experimental-async-context-frame', join(root, 'node_modules/jest/bin/jest.js'), '--testPathPatterns', ...patterns],
      { cwd: join(root, 'test'), stdio: 'inherit', env: { ...process.env, NODE_NO_WARNINGS: '1', OPENAPI_RECORD_EXAMPLES: dir } },
    );
    status = r.status ?? 1;
    if (status !== 0) console.warn('[examples] some e2e tests failed: their operations may lack examples (examples.spec.ts lists them)');
  }
  const lines = readCandidates(dir);
  if (lines.length === 0) {
    console.error(`[examples] no candidate recorded in ${dir}: ${OUT} left as it was`);
    process.exit(1);
  }
  const examples = buildExamples(lines);
  writeFileSync(OUT, `${JSON.stringify(examples, null, 2)}\n`);
  // The built gateway serves them from dist (the e2e suites load dist): copy them there now.
  if (existsSync(join(root, 'gateway/dist'))) spawnSync(process.execPath, [join(root, 'gateway/scripts/copy-assets.mjs')], { stdio: 'inherit' });
  const ops = Object.values(examples);
  console.log(
    `[examples] ${lines.length} candidates → ${ops.length} operations, ${ops.filter((o) => o.request).length} request examples, ` +
      `${ops.reduce((n, o) => n + Object.keys(o.responses ?? {}).length, 0)} answer examples; ${OUT} (${(readFileSync(OUT).length / 1024).toFixed(1)} KiB) ` +
      `in ${((Date.now() - started) / 1000).toFixed(0)} s`,
  );
  if (!from && !keep) rmSync(dir, { recursive: true, force: true });
  else if (!from) console.log(`[examples] candidates kept in ${dir}`);
  process.exit(status === 0 ? 0 : 2);
}

if (process.argv[1] && existsSync(process.argv[1]) && fileURLToPath(import.meta.url) === process.argv[1]) main();
