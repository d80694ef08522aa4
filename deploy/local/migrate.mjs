// Applies every service's migrations (each in its own Postgres schema), in order.
import { spawnSync } from 'node:child_process';
import { dirname, join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { processes } from './processes.mjs';

const root = join(dirname(fileURLToPath(import.meta.url)), '..', '..');
for (const p of processes) {
  if (!p.migrate) continue;
  const r = spawnSync(process.execPath, [p.migrate], { cwd: join(root, p.dir), stdio: 'inherit', env: process.env });
  if (r.status !== 0) {
    console.error(`[migrate] ${p.name} migrations failed`);
    process.exit(r.status ?? 1);
  }
}
