// Checks that the servers the product and its tests need are reachable, and says how to start
// the missing ones (the commands match this machine's Debian packages).
import net from 'node:net';

const url = (v, d) => { try { return new URL(process.env[v] ?? d); } catch { return new URL(d); } };
const servers = [
  { name: 'PostgreSQL', env: 'DATABASE_URL', u: url('DATABASE_URL', 'postgresql://postgres@127.0.0.1:5432/postgres'), port: 5432,
    start: "pg_ctlcluster --skip-systemctl-redirect $(ls /etc/postgresql) main start" },
  { name: 'Redis', env: 'REDIS_URL', u: url('REDIS_URL', 'redis://127.0.0.1:6379'), port: 6379,
    start: 'redis-server --daemonize yes --bind 127.0.0.1 --port 6379 --save "" --appendonly no' },
  { name: 'NATS (JetStream)', env: 'NATS_URL', u: url('NATS_URL', 'nats://127.0.0.1:4222'), port: 4222,
    start: 'nats-server -a 127.0.0.1 -p 4222 -js -sd /var/lib/nats-server &' },
];

const reach = (host, port) => new Promise((resolve) => {
  const s = net.connect({ host, port, timeout: 1500 });
  s.once('connect', () => { s.destroy(); resolve(true); });
  s.once('timeout', () => { s.destroy(); resolve(false); });
  s.once('error', () => resolve(false));
});

const missing = [];
for (const s of servers) {
  const host = s.u.hostname || '127.0.0.1';
  const port = Number(s.u.port || s.port);
  if (!(await reach(host, port))) missing.push({ ...s, host, port });
}
if (missing.length > 0) {
  console.error('\nThese servers are not reachable:\n');
  for (const m of missing) {
    console.error(`  - ${m.name} at ${m.host}:${m.port} (set ${m.env} to use another one)\n      start it with: ${m.start}`);
  }
  console.error('');
  process.exit(1);
}
