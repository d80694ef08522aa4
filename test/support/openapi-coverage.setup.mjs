// Jest global setup of the OpenAPI coverage tally (support/openapi-check.ts): a directory where the
// test workers (spawned after this, so they inherit the variable) note the operations they saw answer.
import { mkdtempSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { createRequire } from 'node:module';

/** The shared global setup first (the development mesh PKI), then the tally's directory. */
const presetSetup = createRequire(import.meta.url)('../jest.global-setup.cjs');

export default async function setup() {
  await presetSetup();
  process.env.OPENAPI_COVERAGE_DIR = mkdtempSync(join(tmpdir(), 'openapi-coverage-'));
}
