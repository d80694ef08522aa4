import { AppError } from '@wallet/platform';
import { parseIncomingPayment } from './incoming-payment.js';

const notification = (over: Record<string, unknown> = {}) =>
  Buffer.from(
    JSON.stringify({ eventId: 'e1', providerTransferId: 'brb_in_1', keyValue: '@Abc123', amountCents: 1500, receivedAt: '2026-01-01T00:00:00Z', ...over }),
  );

describe("the network's notification of an inbound payment", () => {
  it('carries the transaction id of a paid dynamic QR when it has one', () => {
    expect(parseIncomingPayment(notification({ transactionId: 'TX-2026 0001/a' }))).toMatchObject({ keyValue: '@abc123', transactionId: 'TX-2026 0001/a' });
    expect(parseIncomingPayment(notification()).transactionId).toBeNull();
    expect(parseIncomingPayment(notification({ transactionId: null })).transactionId).toBeNull();
  });

  it('refuses a transaction id that no QR carries: empty, over 35, not printable ASCII, not a string', () => {
    for (const transactionId of ['', 'x'.repeat(36), 'año', 'tab\there', 42]) {
      let err: unknown;
      try {
        parseIncomingPayment(notification({ transactionId }));
      } catch (e) {
        err = e;
      }
      expect(err).toBeInstanceOf(AppError);
      expect((err as AppError).code).toBe('INVALID_REQUEST');
    }
    expect(parseIncomingPayment(notification({ transactionId: 'x'.repeat(35) })).transactionId).toHaveLength(35);
  });
});
