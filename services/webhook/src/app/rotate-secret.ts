import { AppError, invalidRequest } from '@wallet/platform';
import { newSigningSecret } from '../domain/secrets.js';
import type { WebhookDeps } from './deps.js';
import { requireCompany } from './webhook-checks.js';
import type { EndpointRow } from './ports.js';

export const DEFAULT_OVERLAP_SECONDS = 86_400;
export const MAX_OVERLAP_SECONDS = 7 * 86_400;

/**
 * A new signing secret for a company's endpoint, returned once. The current one keeps signing
 * (beside the new one) for `overlapSeconds` (default a day, at most seven, 0 = not at all).
 */
export class RotateSecret {
  constructor(private readonly deps: WebhookDeps) {}

  async execute(companyId: string | undefined, id: string, overlapSeconds: number | undefined): Promise<{ endpoint: EndpointRow; secret: string }> {
    const cid = requireCompany(companyId);
    const overlap = overlapSeconds ?? DEFAULT_OVERLAP_SECONDS;
    if (!Number.isInteger(overlap) || overlap < 0 || overlap > MAX_OVERLAP_SECONDS) {
      throw invalidRequest([{ path: 'overlapSeconds', message: `Debe ser un entero entre 0 y ${MAX_OVERLAP_SECONDS}.` }]);
    }
    const secret = newSigningSecret();
    const endpoint = await this.deps.store.rotateSecret(cid, id, this.deps.secrets.seal(secret), overlap);
    if (!endpoint) throw new AppError('WEBHOOK_ENDPOINT_NOT_FOUND');
    return { endpoint, secret };
  }
}
