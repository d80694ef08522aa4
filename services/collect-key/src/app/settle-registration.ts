import { maskKeyValue, type CollectKeyRecord } from '../domain/collect-key.js';
import type { CollectKeyDeps } from './deps.js';
import { keyEventFor } from './events.js';
import type { RegistrationOutcome } from './ports.js';

/** The key after this attempt, the directory's answer, and whether this attempt's compare-and-set made it ACTIVE. */
export interface Settled {
  key: CollectKeyRecord;
  outcome: RegistrationOutcome;
  activated: boolean;
}

/**
 * Settles a REGISTERING key by the directory's answer. The registration is idempotent for the
 * same value and callback URL, so asking again is how we learn whether the value is registered
 * to us, and several askers (CreateKey, a retry of it for the same externalId, the sweeper) may
 * run at once: each settles the row by a compare-and-set from REGISTERING, the first one wins.
 *
 * - REGISTERED → ACTIVE (with the registration's anchorHandle) + `collectkey.created` (none for a cobro's key).
 * - TAKEN / REFUSED → FAILED (final): the directory holds no registration of ours for the value.
 * - UNAVAILABLE → unchanged: it may have landed; the next asker (the sweeper after the grace) asks again.
 *
 * A registration that landed for a row another asker moved to FAILED meanwhile is withdrawn,
 * unless the value is held here again by another key.
 */
export class SettleRegistration {
  constructor(private readonly deps: CollectKeyDeps) {}

  async execute(k: CollectKeyRecord): Promise<Settled> {
    const deps = this.deps;
    const { outcome, anchorHandle } = await deps.directory.register({
      keyValue: k.keyValue,
      holderName: k.name,
      callbackUrl: deps.settings.incomingCallbackUrl,
    });
    if (outcome === 'UNAVAILABLE') return { key: (await deps.store.byId(k.id)) ?? k, outcome, activated: false };
    if (outcome === 'REGISTERED') {
      // The registration it went live with: payments the network routes to it name it (HandleIncomingPayment attributes by it).
      const done = await deps.store.setState(k.id, ['REGISTERING'], 'ACTIVE', keyEventFor(deps, 'created'), anchorHandle);
      if (done) {
        deps.log.info({ keyId: done.id, companyId: done.companyId, externalId: done.externalId }, 'collect key created');
        return { key: done, outcome, activated: true };
      }
      const now = (await deps.store.byId(k.id)) ?? k;
      if (now.state === 'FAILED') await this.withdraw(k);
      return { key: now, outcome, activated: false };
    }
    const done = await deps.store.setState(k.id, ['REGISTERING'], 'FAILED');
    if (done) deps.log.info({ keyId: k.id, companyId: k.companyId, outcome }, 'collect key registration refused by the directory');
    return { key: done ?? (await deps.store.byId(k.id)) ?? k, outcome, activated: false };
  }

  private async withdraw(k: CollectKeyRecord): Promise<void> {
    const deps = this.deps;
    const holder = await deps.store.byValue(k.keyValue);
    if (holder && holder.state !== 'DELETED') return; // held here again: the registration is that key's now
    await deps.directory
      .unregister(k.keyValue)
      .catch((err: unknown) =>
        deps.log.error({ keyId: k.id, keyValue: maskKeyValue(k.keyValue), err: (err as Error).message }, 'could not withdraw the registration of a FAILED key'),
      );
  }
}
