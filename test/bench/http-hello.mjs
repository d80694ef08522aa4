// The lowest ceiling: a bare Node `http` "hello" on the same machine (no framework), for the benchmark's ratio.
import { createServer } from 'node:http';
const body = JSON.stringify({ hello: 'world' });
const server = createServer((req, res) => {
  res.writeHead(200, { 'content-type': 'application/json; charset=utf-8', 'content-length': Buffer.byteLength(body) });
  res.end(body);
});
server.listen(Number(process.argv[2] ?? 8182), '127.0.0.1', () => process.send?.('ready'));
process.on('SIGTERM', () => server.close(() => process.exit(0)));
