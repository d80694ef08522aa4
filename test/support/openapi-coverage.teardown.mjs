// Jest global teardown of the OpenAPI coverage tally (support/openapi-check.ts): prints the operations
// of GET /openapi.json that no checked answer of this run showed answering 2xx (the list is complete
// only when every e2e file ran), then removes the directory.
import { readFileSync, readdirSync, rmSync } from 'node:fs';
import { join } from 'node:path';

export default function teardown() {
  const dir = process.env.OPENAPI_COVERAGE_DIR;
  if (!dir) return;
  try {
    const files = readdirSync(dir);
    if (!files.includes('operations.json')) return; // no gateway answer was checked in this run
    const operations = JSON.parse(readFileSync(join(dir, 'operations.json'), 'utf8'));
    const ok = new Set();
    for (const f of files.filter((n) => n.startsWith('seen-'))) {
      for (const line of readFileSync(join(dir, f), 'utf8').split('\n')) {
        if (!line) continue;
        const { operationId, status } = JSON.parse(line);
        if (status >= 200 && status < 300) ok.add(operationId);
      }
    }
    const missing = operations.filter((o) => !ok.has(o.operationId));
    console.log(
      `\n[openapi] ${operations.length - missing.length} of ${operations.length} operations answered 2xx to a checked request in this run` +
        (missing.length ? `; not seen: ${missing.map((o) => `${o.operationId} (${o.key})`).join(', ')}` : ''),
    );
  } finally {
    rmSync(dir, { recursive: true, force: true });
    delete process.env.OPENAPI_COVERAGE_DIR;
  }
}
