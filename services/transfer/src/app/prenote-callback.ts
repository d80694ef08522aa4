import { invalidRequest } from '@wallet/platform';
import type { CounterpartyDeps, CounterpartyVerifier } from './counterparty-verifier.js';

const PRENOTE_ID = /^[A-Za-z0-9._:-]{1,64}$/;

/**
 * The ACH rail's prenote outcome (`type: "ach.prenote"`, docs/sandbox.md "ACH prenotes"), after
 * HandleRailCallback checked its signature: applied to the counterparty whose current prenote it is
 * (ACCEPTED → VERIFIED, REJECTED → FAILED with the rail's code and reason). A prenote no live
 * counterparty holds (unknown, or replaced by a change of account) is acknowledged and ignored, so
 * the rail stops retrying; a repeat finds the counterparty decided and changes nothing.
 */
export class ApplyPrenoteCallback {
  constructor(
    private readonly deps: CounterpartyDeps,
    private readonly verifier: CounterpartyVerifier,
  ) {}

  async execute(body: Record<string, unknown>): Promise<{ accepted: boolean; duplicate: boolean }> {
    const s = (k: string) => (typeof body[k] === 'string' && (body[k] as string).length > 0 ? (body[k] as string) : null);
    const prenoteId = s('prenoteId');
    const status = s('status');
    const problems: Array<{ path: string; message: string }> = [];
    if (!prenoteId || !PRENOTE_ID.test(prenoteId)) problems.push({ path: 'prenoteId', message: 'must be a prenote id' });
    if (status !== 'ACCEPTED' && status !== 'REJECTED') problems.push({ path: 'status', message: 'must be ACCEPTED or REJECTED' });
    if (problems.length > 0) throw invalidRequest(problems);
    const c = await this.deps.counterparties.getByPrenote(prenoteId!);
    if (!c) {
      this.deps.log.warn({ prenoteId }, 'prenote callback for an unknown or superseded prenote ignored');
      return { accepted: true, duplicate: true };
    }
    if (c.status !== 'PENDING') return { accepted: true, duplicate: true };
    const won = await this.verifier.settlePrenote(
      c,
      { status: status as 'ACCEPTED' | 'REJECTED', reasonCode: s('reasonCode')?.slice(0, 32) ?? null, reason: s('reason')?.slice(0, 500) ?? null },
      'rail',
    );
    return { accepted: true, duplicate: !won };
  }
}
