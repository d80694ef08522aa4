// The ceiling: a bare Koa "hello" on the same machine, for the benchmark's ratio.
import Koa from 'koa';
const app = new Koa();
app.use((ctx) => {
  ctx.body = { hello: 'world' };
});
const server = app.listen(Number(process.argv[2] ?? 8181), '127.0.0.1', () => process.send?.('ready'));
process.on('SIGTERM', () => server.close(() => process.exit(0)));
