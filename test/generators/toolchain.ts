// Generates a client from an OpenAPI document with each of three mainstream generators (default
// options, their CLIs from node_modules, offline), lays the hand-written flow beside it, compiles
// both with tsc in strict mode and runs the compiled flow as its own Node process.
import { execFile } from 'node:child_process';
import { copyFileSync, mkdirSync, realpathSync, symlinkSync, writeFileSync } from 'node:fs';
import { dirname, join } from 'node:path';
import { fileURLToPath } from 'node:url';
import type { FlowEnv, FlowReport } from './flow-env.js';

const here = dirname(fileURLToPath(import.meta.url));
const root = join(here, '..', '..');

export const TOOLS = ['openapi-typescript', 'hey-api', 'orval'] as const;
export type Tool = (typeof TOOLS)[number];

/** A package's CLI script (node_modules/.bin resolves to it), run with this Node. */
const bin = (name: string) => realpathSync(join(root, 'node_modules', '.bin', name));

/** Each generator's CLI with its default options: input document, output place, nothing else. */
const GENERATE: Record<Tool, (doc: string) => string[]> = {
  // The documented pair: types in a .d.ts for openapi-fetch's createClient<paths>().
  'openapi-typescript': (doc) => [bin('openapi-typescript'), doc, '--output', 'generated/schema.d.ts'],
  // Default plugins (types, sdk, @hey-api/client-fetch bundled in the output); no log file left behind.
  'hey-api': (doc) => [bin('openapi-ts'), '--input', doc, '--output', 'generated', '--silent', '--no-log-file'],
  // Default client (axios), one file.
  orval: (doc) => [bin('orval'), '--input', doc, '--output', 'generated/api.ts', '--quiet'],
};

export interface Step {
  ok: boolean;
  ms: number;
  output: string;
}

function run(args: string[], cwd: string, env: Record<string, string> = {}, timeoutMs = 120_000): Promise<Step> {
  const started = Date.now();
  return new Promise((resolve) => {
    execFile(
      process.execPath,
      args,
      // NO_COLOR: plain diagnostics; DO_NOT_TRACK: the common opt-out, should any tool grow telemetry.
      { cwd, timeout: timeoutMs, maxBuffer: 64 * 1024 * 1024, env: { ...process.env, NO_COLOR: '1', DO_NOT_TRACK: '1', ...env } },
      (err, stdout, stderr) => resolve({ ok: !err, ms: Date.now() - started, output: `${stdout}${stderr}${err && !stdout && !stderr ? String(err) : ''}` }),
    );
  });
}

/**
 * A fresh folder for one tool: the flow (test/generators/<tool>/flow.ts) with its entry point and
 * FlowEnv, an ESM package.json, a strict tsconfig, and node_modules pointing at the repository's
 * (where the generators' run-time packages, openapi-fetch and axios, are installed).
 */
export function layOut(tool: Tool, dir: string): void {
  mkdirSync(join(dir, 'generated'), { recursive: true });
  copyFileSync(join(here, tool, 'flow.ts'), join(dir, 'flow.ts'));
  copyFileSync(join(here, 'flow-env.ts'), join(dir, 'flow-env.ts'));
  copyFileSync(join(here, 'main.ts'), join(dir, 'main.ts'));
  symlinkSync(join(root, 'node_modules'), join(dir, 'node_modules'), 'dir');
  writeFileSync(join(dir, 'package.json'), JSON.stringify({ name: `flow-${tool}`, private: true, type: 'module' }));
  writeFileSync(
    join(dir, 'tsconfig.json'),
    JSON.stringify({
      compilerOptions: {
        target: 'ES2023',
        lib: ['ES2023', 'DOM'],
        module: 'NodeNext',
        moduleResolution: 'NodeNext',
        strict: true,
        noUncheckedIndexedAccess: true,
        noImplicitOverride: true,
        noFallthroughCasesInSwitch: true,
        // Generated code is checked like the flow; only installed packages' .d.ts are skipped.
        skipLibCheck: true,
        types: ['node'],
        rootDir: '.',
        outDir: 'out',
        noEmitOnError: true,
      },
      include: ['*.ts', 'generated/**/*.ts'],
    }),
  );
}

export const generate = (tool: Tool, dir: string, docPath: string): Promise<Step> => run(GENERATE[tool](docPath), dir);

/** tsc -p (strict; emits only when there is no error). */
export const compile = (dir: string): Promise<Step> =>
  run([join(root, 'node_modules', 'typescript', 'bin', 'tsc'), '-p', 'tsconfig.json', '--pretty', 'false'], dir);

/** Runs the compiled flow in its own process; the report it prints, or the failure. */
export async function runFlow(dir: string, env: FlowEnv): Promise<{ step: Step; report?: FlowReport }> {
  const step = await run([join(dir, 'out', 'main.js')], dir, { FLOW_ENV: JSON.stringify(env) }, 90_000);
  if (!step.ok) return { step };
  const line = step.output.trim().split('\n').at(-1) ?? '';
  return { step, report: JSON.parse(line) as FlowReport };
}
