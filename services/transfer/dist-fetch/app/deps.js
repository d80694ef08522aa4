import { randomBytes, randomUUID } from 'node:crypto';
import { currentTraceparent } from '@wallet/platform';
export function transferDeps(p) {
    return {
        ...p, now: () => new Date(), newId: randomUUID, newApprovalId: () => `appr_${randomBytes(16).toString('hex')}`, traceparent: currentTraceparent,
    };
}
//# sourceMappingURL=deps.js.map