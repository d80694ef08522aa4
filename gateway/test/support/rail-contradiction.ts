import { randomUUID } from 'node:crypto';
import { signPayload } from '@wallet/platform';
import type { adminOf, Client } from './http.js';
import { SANDBOX_ACH_ACCOUNT } from '@wallet/platform/testing';

/** The ACH rail's signed callback, as the provider would post it. */
export function railCallback(gatewayUrl: string, transactionId: string, status: 'COMPLETED' | 'FAILED') {
  const raw = JSON.stringify({
    eventId: `evt-${randomUUID()}`,
    transactionId,
    providerTransferId: `ach-${transactionId.slice(0, 8)}`,
    rail: 'ACH',
    status,
    errorMessage: status === 'FAILED' ? 'Cuenta cerrada' : null,
  });
  return fetch(`${gatewayUrl}/webhooks/rails/ach`, {
    method: 'POST',
    body: raw,
    headers: { 'content-type': 'application/json', 'x-provider-signature': signPayload('dev-rail-callback-secret', raw, Math.floor(Date.now() / 1000)) },
  });
}

/**
 * A send the rail first fails (funds released), then reports paid: one RAIL_COMPLETED_AFTER_RELEASE money
 * exception at transfer (its `resourceId` the transfer).
 */
export async function railContradiction(
  gatewayUrl: string,
  api: Client,
  admin: ReturnType<typeof adminOf>,
): Promise<{ companyId: string; key: string; transferId: string }> {
  const c = await admin.createCompany({ taxRegime: 'SIMPLE' });
  const key = (await admin.issueKey(c.id, 'WRITE')).key as string;
  expect((await admin.credit(c.id, 'ACH', 1_000_000, `seed-${randomUUID()}`)).status).toBe(201);
  const sent = await api.post('/transfers/send', {
    token: key,
    body: {
      amount: 250_000,
      destination: {
        bankAccount: SANDBOX_ACH_ACCOUNT,
      },
    },
  });
  expect(sent.status).toBe(201);
  const transferId = sent.body.id as string;
  expect((await railCallback(gatewayUrl, transferId, 'FAILED')).status).toBe(200);
  expect((await railCallback(gatewayUrl, transferId, 'COMPLETED')).status).toBe(200);
  return { companyId: c.id, key, transferId };
}
