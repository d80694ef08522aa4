import { spawn } from 'node:child_process';
import { mkdtempSync, readFileSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { dirname, join } from 'node:path';
import { fileURLToPath } from 'node:url';

/**
 * The fast part of the fault suite (README.md beside this file): the real processes under load
 * while transfer, ledger, gateway and sandbox are killed with SIGKILL, NATS restarted, Postgres
 * connections cut, Redis stopped, callbacks duplicated / delayed / reordered, the provider timing
 * out and down. The assertions are the money invariants after the run, not timings.
 */
describe('fault injection (fast profile)', () => {
  it('keeps every invariant through kills, restarts and provider faults', async () => {
    const dir = mkdtempSync(join(tmpdir(), 'faults-'));
    const out = join(dir, 'result.json');
    const script = join(dirname(fileURLToPath(import.meta.url)), 'run.mjs');
    let output = '';
    const code = await new Promise<number | null>((resolve) => {
      const child = spawn(process.execPath, [script, '--profile', 'fast', '--json', out], { stdio: ['ignore', 'pipe', 'pipe'], env: { ...process.env } });
      child.stdout.on('data', (d) => { output += d; });
      child.stderr.on('data', (d) => { output += d; });
      child.on('exit', resolve);
    });
    let result: any;
    try { result = JSON.parse(readFileSync(out, 'utf8')); } catch { throw new Error(`no result from the fault run (exit ${code}):\n${output.slice(-4000)}`); }
    rmSync(dir, { recursive: true, force: true });
    if (!result.ok) console.log(output.slice(-6000));
    expect(result.failure).toBeUndefined();
    expect(result.checks.filter((c: any) => c.violations.length > 0)).toEqual([]);
    expect(result.checks.length).toBeGreaterThanOrEqual(15);
    expect(result.kills).toBeGreaterThanOrEqual(4);
    expect(result.faults['kill -9 transfer']).toBe(1);
    expect(result.faults['kill -9 ledger']).toBe(1);
    expect(result.accepted).toBeGreaterThan(0);
    expect(result.incoming).toBeGreaterThan(0);
    expect(code).toBe(0);
  }, 240_000);
});
