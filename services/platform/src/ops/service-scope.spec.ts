import { createLogger } from '../logging/logger.js';
import { ServiceScope } from './service-scope.js';

describe('ServiceScope', () => {
  it('stops in reverse order, once, and keeps going past a failing step', async () => {
    const scope = new ServiceScope(createLogger('scope-test', 'silent'));
    const order: string[] = [];
    scope.defer(() => {
      order.push('db');
    });
    scope.defer(async () => {
      order.push('bus');
      throw new Error('already closed');
    });
    scope.defer(async () => {
      await new Promise((r) => setTimeout(r, 10));
      order.push('grpc');
    });
    const [a, b] = [scope.stop(), scope.stop()];
    expect(a).toBe(b);
    await a;
    await scope.stop();
    expect(order).toEqual(['grpc', 'bus', 'db']);
  });
});
