// Entry point of a compiled flow: reads the FlowEnv from FLOW_ENV, runs the flow, prints the
// FlowReport as JSON on stdout (and exits non-zero with the error on stderr when the flow throws).
import type { FlowEnv } from './flow-env.js';
import { runFlow } from './flow.js';

const env = JSON.parse(process.env.FLOW_ENV ?? '{}') as FlowEnv;
try {
  const report = await runFlow(env);
  process.stdout.write(`${JSON.stringify(report)}\n`);
} catch (err) {
  process.stderr.write(`${err instanceof Error ? (err.stack ?? err.message) : String(err)}\n`);
  process.exitCode = 1;
}
