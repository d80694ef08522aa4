import { prenoteCallbackBody } from '../app/ach-prenotes.js';
import { inboundCallbackBody } from '../app/breb-collect.js';
import { pseCallbackBody } from '../app/pse-links.js';
import { callbackBody } from '../app/rail-transfers.js';
import type { IncomingRow, PrenoteRow, PseLinkRow, TransferRow } from '../app/ports.js';
import { bulkOutcomesBody, isTransferOutcomeBody, retryDelayMs, signCallback, verifyCallbackSignature } from './callbacks.js';
import { amountOutcome } from './rails.js';

describe('callbacks', () => {
  it('signs t.rawBody with HMAC-SHA256', () => {
    // echo -n '1700000000.{"a":1}' | openssl dgst -sha256 -hmac secret
    expect(signCallback('secret', '{"a":1}', 1_700_000_000)).toBe('t=1700000000,v1=49f24e537407743fa4a0242bb63b94b9a47ee99cbbe071ccd8a22550ae411686');
    const header = signCallback('secret', '{"a":1}', 1_700_000_000);
    expect(verifyCallbackSignature('secret', '{"a":1}', header, 1_700_000_100)).toBe(true);
    expect(verifyCallbackSignature('secret', '{"a":2}', header, 1_700_000_100)).toBe(false);
    expect(verifyCallbackSignature('other', '{"a":1}', header, 1_700_000_100)).toBe(false);
    expect(verifyCallbackSignature('secret', '{"a":1}', header, 1_700_000_301)).toBe(false);
    expect(verifyCallbackSignature('secret', '{"a":1}', undefined, 1_700_000_000)).toBe(false);
  });

  it('backs off 1 s, 2 s, 4 s … up to 60 s', () => {
    const p = { baseMs: 1000, maxMs: 60_000 };
    expect([1, 2, 3, 4, 5, 6, 7, 8, 50].map((n) => retryDelayMs(n, p))).toEqual([1000, 2000, 4000, 8000, 16_000, 32_000, 60_000, 60_000, 60_000]);
  });

  it('tells a rail transfer outcome from the other callbacks that share the table', () => {
    const transfer = (rail: 'BREB' | 'ACH', status: 'COMPLETED' | 'FAILED', errorMessage: string | null = null): TransferRow => ({
      providerTransferId: 'brb_0123456789abcdef01234567',
      transactionId: 'tx-1',
      rail,
      amountCents: 1_000n,
      status,
      errorMessage,
      callbackUrl: 'http://127.0.0.1/webhooks/rails/breb',
      request: {},
      outcomeAt: '2025-03-14T13:00:03.250Z',
    });
    expect(isTransferOutcomeBody(callbackBody(transfer('BREB', 'COMPLETED'), 'e-1'))).toBe(true);
    expect(isTransferOutcomeBody(callbackBody(transfer('ACH', 'FAILED', 'Transferencia rechazada'), 'e-2'))).toBe(true);

    const prenote = { prenoteId: 'p-1', status: 'REJECTED', reasonCode: 'R03', settledAt: '2025-03-14T13:00:03.250Z' } as PrenoteRow;
    const link = { depositId: 'dep-1', providerTransferId: 'pse_0123456789abcdef01234567', payerBank: 'BANCOLOMBIA', paidAt: null } as PseLinkRow;
    const incoming = {
      providerTransferId: 'brb_in_0123456789abcdef01234567',
      keyValue: '@tienda',
      amountCents: 5_000n,
      payerName: 'ANA',
      payerDocument: 'CC 1',
      payerBank: 'NEQUI',
      receivedAt: '2025-03-14T13:00:03.250Z',
      transactionId: 'tx-qr-1',
    } as IncomingRow;
    expect(isTransferOutcomeBody(prenoteCallbackBody(prenote, 'e-3'))).toBe(false);
    expect(isTransferOutcomeBody(pseCallbackBody(link, 'PAID', 'e-4', '2025-03-14T13:00:03.250Z'))).toBe(false);
    expect(isTransferOutcomeBody(inboundCallbackBody(incoming, 'e-5', 'anh_0123456789abcdef01234567'))).toBe(false);
    expect(isTransferOutcomeBody('not json')).toBe(false);
    expect(isTransferOutcomeBody('[]')).toBe(false);
    expect(isTransferOutcomeBody(bulkOutcomesBody([callbackBody(transfer('BREB', 'COMPLETED'), 'e-1')]))).toBe(false);
  });

  it('writes the bulk body around the stored bodies, byte for byte', () => {
    const a =
      '{"eventId":"e-1","transactionId":"tx-1","providerTransferId":"brb_1","rail":"BREB","status":"COMPLETED","occurredAt":"2025-03-14T13:00:03.250Z"}';
    const b =
      '{"eventId":"e-2","transactionId":"tx-2","providerTransferId":"brb_2","rail":"BREB","status":"FAILED","errorMessage":"ñ \\u00e9 \\"x\\"","occurredAt":"2025-03-14T13:00:03.251Z"}';
    const bulk = bulkOutcomesBody([a, b]);
    expect(bulk).toBe(`{"type":"rail.outcomes","outcomes":[${a},${b}]}`);
    expect(JSON.parse(bulk)).toEqual({ type: 'rail.outcomes', outcomes: [JSON.parse(a), JSON.parse(b)] });
    expect(bulk).toContain('"errorMessage":"ñ \\u00e9 \\"x\\""'); // not parsed and written again
  });

  it('fails amounts ending in 13 centavos', () => {
    expect(amountOutcome(13n).status).toBe('FAILED');
    expect(amountOutcome(100_013n).status).toBe('FAILED');
    expect(amountOutcome(1_300n).status).toBe('COMPLETED');
    expect(amountOutcome(114n).status).toBe('COMPLETED');
  });
});
