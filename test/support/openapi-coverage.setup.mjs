// Jest global setup of the OpenAPI coverage tally (support/openapi-check.ts): a directory where the
// test workers (spawned after this, so they inherit the variable) note the operations they saw answer.
import { mkdtempSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';

export default function setup() {
  process.env.OPENAPI_COVERAGE_DIR = mkdtempSync(join(tmpdir(), 'openapi-coverage-'));
}
