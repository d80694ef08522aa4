// A/B of one change, client side only: CPU µs per provider call made by the transfer service's
// `callJson` (services/transfer/dist/adapters/http.js) against another build of it (argv[2], e.g.
// services/transfer/dist-old/adapters/http.js), calling a JSON server in a child process, 8 at a time.
// Usage: node test/bench/http-client-ab.mjs <other http.js> [calls per round]
import { fork } from 'node:child_process';
import { resolve } from 'node:path';
import { pathToFileURL } from 'node:url';

if (process.argv[2] === '--server') {
  const { createServer } = await import('node:http');
  const out = JSON.stringify({
    found: true,
    keyType: 'PHONE',
    keyValue: '3100000000',
    recipient: { fullName: 'Ana María Pérez Gómez', idType: 'CC', idValue: '1020304050' },
    anchorHandle: 'anchor-1',
  });
  const srv = createServer((req, res) => {
    req.resume();
    req.on('end', () => {
      res.writeHead(200, { 'content-type': 'application/json', 'content-length': Buffer.byteLength(out) });
      res.end(out);
    });
  });
  srv.listen(0, '127.0.0.1', () => process.send(srv.address().port));
} else {
  const N = Number(process.argv[3] ?? 4000);
  const root = resolve(import.meta.dirname, '..', '..');
  const variants = {
    current: (await import(pathToFileURL(resolve(root, 'services/transfer/dist/adapters/http.js')).href)).callJson,
    other: (await import(pathToFileURL(resolve(process.argv[2])).href)).callJson,
  };
  const server = fork(import.meta.filename, ['--server'], { stdio: 'inherit' });
  const port = await new Promise((r) => server.once('message', r));
  const url = `http://127.0.0.1:${port}/breb/directory/keys/3100000000`;
  const results = { current: [], other: [] };
  for (let round = 0; round < 5; round++) {
    for (const [name, callJson] of Object.entries(variants)) {
      const c0 = process.cpuUsage();
      for (let i = 0; i < N; i += 8) {
        await Promise.all(
          Array.from({ length: 8 }, (_, k) =>
            (k % 2 ? callJson('GET', url, undefined, 5000) : callJson('POST', url, { transactionId: `t-${i + k}`, amountCents: 1000 }, 5000)).then((o) => {
              if (o.kind !== 'response' || o.status !== 200) throw new Error(JSON.stringify(o));
            }),
          ),
        );
      }
      const c = process.cpuUsage(c0);
      if (round > 0) results[name].push((c.user + c.system) / N); // round 0 warms up
    }
  }
  server.kill();
  const med = (a) => a.sort((x, y) => x - y)[Math.floor(a.length / 2)];
  console.log(
    `client CPU µs per call, median of 4 rounds of ${N}: current ${med(results.current).toFixed(1)} (${results.current.map((x) => x.toFixed(0)).join(', ')}), other ${med(results.other).toFixed(1)} (${results.other.map((x) => x.toFixed(0)).join(', ')})`,
  );
}
