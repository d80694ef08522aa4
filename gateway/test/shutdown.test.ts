import { request as httpRequest } from 'node:http';
import { startStack, type Stack } from './support/stack.js';

let stack: Stack;
beforeAll(async () => { stack = await startStack(); });
afterAll(() => stack?.stop());

describe('graceful shutdown', () => {
  it('finishes a request in flight, then refuses new connections and reports not-ready', async () => {
    const gw = await stack.extraGateway({});
    const port = new URL(gw.url).port;
    // A request whose body arrives slowly: it is in flight when stop() begins.
    const inFlight = new Promise<{ status: number; body: string }>((resolve, reject) => {
      const req = httpRequest({
        host: '127.0.0.1', port, method: 'POST', path: '/admin/companies',
        headers: { authorization: `Bearer ${gw.adminToken}`, 'content-type': 'application/json', 'transfer-encoding': 'chunked' },
      }, (res) => {
        let text = '';
        res.on('data', (c) => { text += c; });
        res.on('end', () => resolve({ status: res.statusCode ?? 0, body: text }));
      });
      req.on('error', reject);
      req.write('{"name": "Cierre Ordenado S.A.S.", ');
      setTimeout(() => {
        const stopping = gw.stop();
        setTimeout(() => { req.end('"nit": "900555444-3", "taxRegime": "SIMPLE"}'); void stopping; }, 150);
      }, 150);
    });
    const done = await inFlight;
    expect(done.status).toBe(201);
    expect(JSON.parse(done.body).name).toBe('Cierre Ordenado S.A.S.');
    await gw.stop();
    await expect(fetch(`${gw.url}/openapi.json`)).rejects.toThrow();
    await expect(fetch(`${gw.opsUrl}/readyz`)).rejects.toThrow();
  });
});
