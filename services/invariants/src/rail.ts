import type { Reader } from './snapshot.js';

export type RailTransferStatus = 'PENDING' | 'COMPLETED' | 'FAILED';
export type PseLinkStatus = 'PENDING' | 'PAID' | 'FAILED' | 'REVERSED';

/** A payment the Bre-B network delivered to one of our collect keys (its callback answered 2xx). */
export interface DeliveredInbound {
  providerTransferId: string;
  amount: bigint;
  deliveredAt: Date;
}

/**
 * What the rails say happened: the other side of "COMPLETED ⇔ the rail paid it", "paid by PSE ⇔
 * credited" and "delivered by the network ⇔ booked". In development the provider sandbox's own
 * records (read through its read-only role); in a test, the scripted rail's map. Against real
 * providers the same facts come from their statements (reconciliation); without a source the
 * rail's side of each check is reported as not checked, never as passed.
 */
export interface RailTruth {
  readonly name: string;
  /** The outbound transfers the rail received, by our transfer id. Absent: never received. */
  transfers(ids: string[]): Promise<Map<string, RailTransferStatus>>;
  /** Every transfer id the rail holds, in pages after `after` (for "paid at the rail, unknown to us"). */
  transferIds?(after: string, limit: number): Promise<string[]>;
  /** PSE links by deposit id. */
  pseLinks?(depositIds: string[]): Promise<Map<string, PseLinkStatus>>;
  /** Every inbound payment whose notification we acknowledged, in pages after `after`. */
  deliveredInbound?(after: string, limit: number): Promise<DeliveredInbound[]>;
}

/** The provider sandbox's records (development, the fault suite). */
export function sandboxRail(sandbox: Reader): RailTruth {
  return {
    name: 'sandbox',
    async transfers(ids) {
      const rows = await sandbox.query<{ id: string; status: RailTransferStatus }>(
        `select transaction_id as id, status from sandbox.transfers where transaction_id = any($1::text[])`,
        [ids],
      );
      return new Map(rows.map((r) => [r.id, r.status]));
    },
    async transferIds(after, limit) {
      const rows = await sandbox.query<{ id: string }>(
        `select transaction_id as id from sandbox.transfers where transaction_id > $1 order by transaction_id limit $2`,
        [after, limit],
      );
      return rows.map((r) => r.id);
    },
    async pseLinks(depositIds) {
      const rows = await sandbox.query<{ id: string; status: PseLinkStatus }>(
        `select deposit_id as id, status from sandbox.pse_links where deposit_id = any($1::text[])`,
        [depositIds],
      );
      return new Map(rows.map((r) => [r.id, r.status]));
    },
    async deliveredInbound(after, limit) {
      const rows = await sandbox.query<{ id: string; amount: string; at: Date }>(
        `select i.provider_transfer_id as id, i.amount_cents::text as amount, min(c.delivered_at) as at
           from sandbox.breb_incoming i join sandbox.callbacks c on c.transaction_id = i.provider_transfer_id and c.state = 'delivered'
          where i.provider_transfer_id > $1 group by 1, 2 order by 1 limit $2`,
        [after, limit],
      );
      return rows.map((r) => ({ providerTransferId: r.id, amount: BigInt(r.amount), deliveredAt: r.at }));
    },
  };
}

/** A rail whose truth is a map (the interleaving tests' scripted rail). */
export function mapRail(truth: ReadonlyMap<string, RailTransferStatus>): RailTruth {
  return {
    name: 'scripted rail',
    async transfers(ids) {
      return new Map(ids.flatMap((id) => (truth.has(id) ? [[id, truth.get(id)!] as const] : [])));
    },
    async transferIds(after, limit) {
      return [...truth.keys()]
        .filter((id) => id > after)
        .sort()
        .slice(0, limit);
    },
  };
}
