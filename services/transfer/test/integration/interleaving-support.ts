import { randomUUID } from 'node:crypto';
import { AppError, signPayload } from '@wallet/platform';
import type { Choreography } from '@wallet/platform/testing';
import type { BrebDirectoryPort, DispatchResult, RailPort, RailStatus } from '../../src/app/ports.js';
import type { TransferUseCases } from '../../src/app/use-cases.js';
import type { TransferRecord } from '../../src/domain/transfer.js';

type Outcome = 'COMPLETED' | 'FAILED';

/** The one Bre-B key the interleaving tests pay, and its holder. */
export const KEY = { keyValue: '3001112233', recipient: { firstName: 'Ana', lastName: 'Gómez', fullName: 'Ana Gómez', idType: 'CC', idValue: '1012345678' } };

/** A send of `amount` to KEY by the company, as the request path makes it (a new request hash unless given). */
export function sendToKey(
  uc: TransferUseCases,
  co: { id: string; profile: Parameters<TransferUseCases['send']['execute']>[1]['company'] },
  amount: bigint,
  o: { requestHash?: string; reference?: string } = {},
) {
  return uc.send.execute(
    { companyId: co.id },
    {
      amount,
      brebKey: { type: 'PHONE', value: KEY.keyValue },
      targetName: KEY.recipient.fullName,
      targetDocument: KEY.recipient.idValue,
      company: co.profile,
      requestHash: o.requestHash ?? randomUUID(),
      ...(o.reference ? { reference: o.reference } : {}),
    },
  );
}

/**
 * An actor that makes one call at its point `call` and records how it ended in `into`: `show` of its
 * answer (`ok` by default), or the error's code.
 */
export function recordedActor(
  c: Choreography,
  into: string[],
  label: string,
  fn: () => Promise<unknown>,
  show: (answer: unknown) => string = () => 'ok',
): Promise<void> {
  return c.actor(label, async () => {
    await c.point('call');
    into.push(
      await fn().then(
        (r) => `${label}: ${show(r)}`,
        (e: unknown) => `${label}: ${(e as AppError).code ?? String(e)}`,
      ),
    );
  });
}

/** A directory that always finds KEY active (the interleavings are about the saga, not the lookup). */
export const directory: BrebDirectoryPort = {
  async lookup() {
    return {
      status: 'active',
      anchorHandle: 'anchor-1',
      keyType: 'PHONE',
      keyValue: KEY.keyValue,
      recipient: { ...KEY.recipient, bankName: 'Banco', bankAccountType: 'Ahorros', status: 'ACTIVE' },
    };
  },
};

/** The rail: takes a transfer once (idempotent on its id), then pays it or fails it and calls back. */
export class ScriptedRail implements RailPort {
  readonly truth = new Map<string, 'PENDING' | 'COMPLETED' | 'FAILED'>();
  constructor(
    private readonly c: Choreography,
    private readonly uc: () => TransferUseCases,
    private readonly script: {
      secret: string;
      /** How the rail settles a transfer (one outcome for all, or per transfer). */
      outcome: Outcome | ((t: TransferRecord) => Outcome);
      callbacks: number;
      contradict?: boolean;
      /** Each outcome as a page of outcomes (`type: "rail.outcomes"`, docs/sandbox.md "Bulk outcomes"). */
      bulk?: boolean;
    },
  ) {}

  private outcomeOf(t: TransferRecord): Outcome {
    return typeof this.script.outcome === 'function' ? this.script.outcome(t) : this.script.outcome;
  }

  async dispatch(t: TransferRecord): Promise<DispatchResult> {
    await this.c.point('rail.dispatch');
    if (!this.truth.has(t.id)) {
      this.truth.set(t.id, 'PENDING');
      void this.c.actor(t.reference ? `rail ${t.reference}` : 'rail', () => this.settle(t));
    }
    await this.c.point('rail.dispatch ↩');
    return { outcome: 'accepted', providerTransferId: `prov-${t.id}` };
  }

  private async settle(t: TransferRecord): Promise<void> {
    await this.c.point('rail settles');
    const outcome = this.outcomeOf(t);
    this.truth.set(t.id, outcome);
    for (let i = 0; i < this.script.callbacks; i++) await this.callback(t, `evt-${t.id}`, outcome, `rail callback #${i + 1}`);
    // A rail contradicting itself afterwards: the opposite outcome under a new event id.
    if (this.script.contradict) await this.callback(t, `evt-${t.id}-contra`, outcome === 'COMPLETED' ? 'FAILED' : 'COMPLETED', 'rail contradicts itself');
  }

  private async callback(t: TransferRecord, eventId: string, status: Outcome, label: string): Promise<void> {
    const outcome = {
      eventId,
      transactionId: t.id,
      providerTransferId: `prov-${t.id}`,
      rail: t.rail,
      status,
      errorMessage: status === 'FAILED' ? 'Cuenta de destino cerrada' : null,
    };
    const body = Buffer.from(JSON.stringify(this.script.bulk ? { type: 'rail.outcomes', outcomes: [outcome] } : outcome));
    await this.c.point(label);
    for (;;) {
      try {
        await this.uc().handleRailCallback.execute({
          rail: t.rail,
          rawBody: body,
          signature: signPayload(this.script.secret, body, Math.floor(Date.now() / 1000)),
        });
        return;
      } catch (err) {
        // Ahead of our record (still RECEIVED): the rail retries later, as real ones do.
        if (!(err instanceof AppError && err.code === 'SERVICE_UNAVAILABLE')) throw err;
        await this.c.point(`${label} retry`);
      }
    }
  }

  async status(_rail: 'BREB' | 'ACH', id: string): Promise<RailStatus> {
    await this.c.point('rail.status');
    const s = this.truth.get(id);
    return s ? { found: true, status: s, providerTransferId: `prov-${id}`, errorMessage: null } : { found: false };
  }

  async validateAchAccount() {
    return { result: 'valid' as const };
  }
}
