import type { Database, SqlTx } from '@wallet/platform';
import type {
  AttemptFailure,
  ClaimedDelivery,
  DeliveryFilter,
  DeliveryQueue,
  DeliveryRow,
  DeliveryStatus,
  EndpointPatch,
  EndpointRow,
  EndpointStore,
  EventRecorder,
  NewEndpoint,
  StreamFloor,
} from '../app/ports.js';
import { eventBody, type WebhookEvent } from '../domain/event-types.js';
import { newDeliveryId, newPingEventId } from '../domain/ids.js';

/** SQL of the webhook schema: endpoints, events, deliveries (queue + log). Every read is scoped by company. */

const d = (v: unknown): Date => (v instanceof Date ? v : new Date(String(v)));
const dn = (v: unknown): Date | null => (v === null || v === undefined ? null : d(v));
const n = (v: unknown): number | null => (v === null || v === undefined ? null : Number(v));

function endpointFrom(r: Record<string, unknown>): EndpointRow {
  return {
    id: String(r.id),
    companyId: String(r.company_id),
    url: String(r.url),
    description: (r.description as string | null) ?? null,
    events: (r.events as string[]) ?? [],
    enabled: Boolean(r.enabled),
    secretSealed: String(r.secret_sealed),
    previousSecretSealed: (r.previous_secret_sealed as string | null) ?? null,
    previousSecretExpiresAt: dn(r.previous_secret_expires_at),
    createdAt: d(r.created_at),
    updatedAt: d(r.updated_at),
  };
}

function deliveryFrom(r: Record<string, unknown>): DeliveryRow {
  return {
    id: String(r.id),
    seq: String(r.seq),
    companyId: String(r.company_id),
    endpointId: String(r.endpoint_id),
    eventId: String(r.event_id),
    eventType: String(r.event_type),
    resourceKey: (r.resource_key as string | null) ?? null,
    status: r.status as DeliveryStatus,
    attempts: Number(r.attempts),
    nextAttemptAt: d(r.next_attempt_at),
    giveUpAt: d(r.give_up_at),
    lastAttemptAt: dn(r.last_attempt_at),
    lastResponseStatus: n(r.last_response_status),
    lastLatencyMs: n(r.last_latency_ms),
    lastError: (r.last_error as string | null) ?? null,
    deliveredAt: dn(r.delivered_at),
    replayOf: (r.replay_of as string | null) ?? null,
    createdAt: d(r.created_at),
  };
}

export class SqlWebhookStore implements EndpointStore, EventRecorder, DeliveryQueue {
  constructor(
    private readonly db: Database,
    private readonly horizonSeconds: number,
  ) {}

  // ---- endpoints ----

  async insertEndpoint(e: NewEndpoint, limit: number): Promise<EndpointRow | undefined> {
    // Creations of one tenant take turns (a transaction lock on it), so two at once cannot both see room for one more.
    return this.db.preparedTx(async (tx) => {
      await tx.query(`select pg_advisory_xact_lock(hashtextextended('webhook.endpoints:' || $1, 0))`, [e.companyId]);
      const [live] = await tx.query<{ n: number }>(`select count(*)::int as n from webhook.endpoints where company_id = $1 and deleted_at is null`, [
        e.companyId,
      ]);
      if (live!.n >= limit) return undefined;
      const rows = await tx.query(
        `insert into webhook.endpoints (id, company_id, url, description, events, enabled, secret_sealed) values ($1, $2, $3, $4, $5, $6, $7) returning *`,
        [e.id, e.companyId, e.url, e.description, e.events, e.enabled, e.secretSealed],
      );
      return endpointFrom(rows[0]!);
    });
  }

  async listEndpoints(companyId: string): Promise<EndpointRow[]> {
    const rows = await this.db.prepared(`select * from webhook.endpoints where company_id = $1 and deleted_at is null order by created_at, id`, [companyId]);
    return rows.map(endpointFrom);
  }

  async getEndpoint(companyId: string, id: string): Promise<EndpointRow | undefined> {
    const rows = await this.db.prepared(`select * from webhook.endpoints where id = $1 and company_id = $2 and deleted_at is null`, [id, companyId]);
    return rows[0] ? endpointFrom(rows[0]) : undefined;
  }

  async updateEndpoint(companyId: string, id: string, p: EndpointPatch): Promise<EndpointRow | undefined> {
    const rows = await this.db.prepared(
      `update webhook.endpoints set
         url = coalesce($3, url),
         events = coalesce($4::text[], events),
         enabled = coalesce($5, enabled),
         description = case when $6 then $7 else description end,
         updated_at = now()
       where id = $1 and company_id = $2 and deleted_at is null returning *`,
      [id, companyId, p.url ?? null, p.events ?? null, p.enabled ?? null, p.description !== undefined, p.description ?? null],
    );
    return rows[0] ? endpointFrom(rows[0]) : undefined;
  }

  /** Soft delete; its pending deliveries end FAILED. False when there was no such live endpoint. */
  async deleteEndpoint(companyId: string, id: string): Promise<boolean> {
    return this.db.preparedTx(async (tx) => {
      const rows = await tx.query(
        `update webhook.endpoints set deleted_at = now(), enabled = false, updated_at = now() where id = $1 and company_id = $2 and deleted_at is null returning id`,
        [id, companyId],
      );
      if (rows.length === 0) return false;
      await tx.query(`update webhook.deliveries set status = 'FAILED', last_error = 'endpoint deleted' where endpoint_id = $1 and status = 'PENDING'`, [id]);
      return true;
    });
  }

  /** The new secret signs from now on; the current one keeps signing until `previousExpiresAt` (none when null). */
  async rotateSecret(companyId: string, id: string, newSealed: string, overlapSeconds: number): Promise<EndpointRow | undefined> {
    const rows = await this.db.prepared(
      `update webhook.endpoints set
         previous_secret_sealed = case when $4 > 0 then secret_sealed else null end,
         previous_secret_expires_at = case when $4 > 0 then now() + make_interval(secs => $4) else null end,
         secret_sealed = $3, updated_at = now()
       where id = $1 and company_id = $2 and deleted_at is null returning *`,
      [id, companyId, newSealed, overlapSeconds],
    );
    return rows[0] ? endpointFrom(rows[0]) : undefined;
  }

  // ---- events → deliveries ----

  /**
   * In the inbox transaction: a delivery for every enabled endpoint of the event's company subscribed
   * to its type, and the event itself (once) when there is at least one. Returns how many deliveries
   * were created.
   *
   * A whole page of events costs at most three statements whatever its size: one read of the
   * endpoints of every (company, type) of the page, one multi-row insert of the events, one of the
   * deliveries. The rows and their order are those of handling the events one by one in order
   * (each event's deliveries in endpoint order, `created_at, id`): deliveries take their `seq`
   * in insertion order, and the worker sends a resource's deliveries to an endpoint in `seq` order.
   * The parameters are arrays: `tx` must pass them as they are (the InboxConsumer's prepared-statement
   * transaction does; MikroORM's `Tx` does not).
   */
  async recordEvents(tx: SqlTx, events: readonly WebhookEvent[]): Promise<number> {
    if (events.length === 0) return 0;
    // Each distinct (company, type) once; its 1-based position is the ordinality the read returns.
    const pairOf = new Map<string, number>();
    const companies: string[] = [];
    const types: string[] = [];
    const pairIndex = events.map((e) => {
      const key = `${e.companyId}\u0000${e.type}`;
      let i = pairOf.get(key);
      if (i === undefined) {
        companies.push(e.companyId);
        types.push(e.type);
        i = companies.length;
        pairOf.set(key, i);
      }
      return i;
    });
    const found = await tx.query<{ ord: string; id: string }>(
      `select q.ord, ep.id
       from unnest($1::text[], $2::text[]) with ordinality as q(company_id, type, ord)
       join webhook.endpoints ep on ep.company_id = q.company_id and ep.enabled and ep.deleted_at is null and q.type = any(ep.events)
       order by q.ord, ep.created_at, ep.id`,
      [companies, types],
    );
    const endpointsOf = new Map<number, string[]>();
    for (const r of found) {
      const ord = Number(r.ord);
      const list = endpointsOf.get(ord);
      if (list) list.push(r.id);
      else endpointsOf.set(ord, [r.id]);
    }

    const ev = {
      id: [] as string[],
      companyId: [] as string[],
      type: [] as string[],
      resourceKey: [] as string[],
      resourceId: [] as string[],
      body: [] as string[],
      createdAt: [] as Date[],
    };
    const dl = {
      id: [] as string[],
      companyId: [] as string[],
      endpointId: [] as string[],
      eventId: [] as string[],
      type: [] as string[],
      resourceKey: [] as string[],
      stream: [] as (string | null)[],
      streamSeq: [] as (number | null)[],
    };
    for (const [i, e] of events.entries()) {
      const endpoints = endpointsOf.get(pairIndex[i]!);
      // An event is stored only to be delivered: none is kept for a company with no endpoint subscribed to it
      // (an endpoint receives the events that happen after it is created, never earlier ones).
      if (!endpoints) continue;
      ev.id.push(e.id);
      ev.companyId.push(e.companyId);
      ev.type.push(e.type);
      ev.resourceKey.push(e.resourceKey);
      ev.resourceId.push(e.resourceId);
      ev.body.push(eventBody(e));
      ev.createdAt.push(e.createdAt);
      for (const endpointId of endpoints) {
        dl.id.push(newDeliveryId());
        dl.companyId.push(e.companyId);
        dl.endpointId.push(endpointId);
        dl.eventId.push(e.id);
        dl.type.push(e.type);
        dl.resourceKey.push(e.resourceKey);
        dl.stream.push(e.stream);
        dl.streamSeq.push(e.streamSeq);
      }
    }
    if (ev.id.length === 0) return 0;
    // A repeated event id (a redelivered source event, or twice in the page) keeps its first row, as one by one.
    await tx.query(
      `insert into webhook.events (id, company_id, type, resource_key, resource_id, body, created_at)
       select e.id, e.company_id, e.type, e.resource_key, e.resource_id, e.body, e.created_at
       from unnest($1::text[], $2::text[], $3::text[], $4::text[], $5::text[], $6::text[], $7::timestamptz[])
         with ordinality as e(id, company_id, type, resource_key, resource_id, body, created_at, ord)
       order by e.ord
       on conflict (id) do nothing`,
      [ev.id, ev.companyId, ev.type, ev.resourceKey, ev.resourceId, ev.body, ev.createdAt],
    );
    // `order by` the ordinality: rows are inserted, and take their seq, in the order of the arrays.
    const rows = await tx.query(
      `insert into webhook.deliveries (id, company_id, endpoint_id, event_id, event_type, resource_key, give_up_at, source_stream, source_seq)
       select d.id, d.company_id, d.endpoint_id, d.event_id, d.event_type, d.resource_key, now() + make_interval(secs => $7), d.source_stream, d.source_seq
       from unnest($1::text[], $2::text[], $3::text[], $4::text[], $5::text[], $6::text[], $8::text[], $9::bigint[])
         with ordinality as d(id, company_id, endpoint_id, event_id, event_type, resource_key, source_stream, source_seq, ord)
       order by d.ord
       on conflict (endpoint_id, event_id) where replay_of is null do nothing returning id`,
      [dl.id, dl.companyId, dl.endpointId, dl.eventId, dl.type, dl.resourceKey, this.horizonSeconds, dl.stream, dl.streamSeq],
    );
    return rows.length;
  }

  /** A `webhook.ping` event and its one delivery (no resource: not ordered). */
  async createPing(companyId: string, endpointId: string, body: (eventId: string, createdAt: Date) => string): Promise<DeliveryRow> {
    const eventId = newPingEventId();
    const createdAt = new Date();
    return this.db.preparedTx(async (tx) => {
      await tx.query(
        `insert into webhook.events (id, company_id, type, resource_key, resource_id, body, created_at) values ($1, $2, 'webhook.ping', null, null, $3, $4)`,
        [eventId, companyId, body(eventId, createdAt), createdAt],
      );
      const rows = await tx.query(
        `insert into webhook.deliveries (id, company_id, endpoint_id, event_id, event_type, resource_key, give_up_at)
         values ($1, $2, $3, $4, 'webhook.ping', null, now() + make_interval(secs => $5)) returning *`,
        [newDeliveryId(), companyId, endpointId, eventId, this.horizonSeconds],
      );
      return deliveryFrom(rows[0]!);
    });
  }

  /** A new delivery of the same event (same event id) to the same endpoint, in the original's place in the resource's order. */
  async replay(companyId: string, original: DeliveryRow): Promise<DeliveryRow> {
    const rows = await this.db.prepared(
      `insert into webhook.deliveries (id, company_id, endpoint_id, event_id, event_type, resource_key, give_up_at, replay_of, source_stream, source_seq)
       select $1, $2, $3, $4, $5, $6, now() + make_interval(secs => $7), $8, o.source_stream, o.source_seq
       from webhook.deliveries o where o.id = $8 returning *`,
      [newDeliveryId(), companyId, original.endpointId, original.eventId, original.eventType, original.resourceKey, this.horizonSeconds, original.id],
    );
    return deliveryFrom(rows[0]!);
  }

  // ---- delivery log ----

  async getDelivery(companyId: string, id: string): Promise<DeliveryRow | undefined> {
    const rows = await this.db.prepared(`select * from webhook.deliveries where id = $1 and company_id = $2`, [id, companyId]);
    return rows[0] ? deliveryFrom(rows[0]) : undefined;
  }

  /** Newest first; `afterSeq` is the cursor (the last seq of the previous page). */
  async listDeliveries(companyId: string, f: DeliveryFilter): Promise<DeliveryRow[]> {
    const rows = await this.db.prepared(
      `select * from webhook.deliveries
       where company_id = $1 and ($2::text is null or endpoint_id = $2) and ($3::text is null or status = $3) and ($4::bigint is null or seq < $4)
       order by seq desc limit $5`,
      [companyId, f.endpointId ?? null, f.status ?? null, f.beforeSeq ?? null, f.limit],
    );
    return rows.map(deliveryFrom);
  }

  // ---- the worker ----

  /**
   * Claims up to `batch` due deliveries (FOR UPDATE SKIP LOCKED; several workers share the queue) by
   * pushing their next attempt `leaseSeconds` ahead: a worker that dies mid-send leaves them to be
   * retried after the lease. A delivery waits while an older one to the same endpoint about the same
   * resource is still pending (ordered per resource), and while its endpoint is disabled.
   *
   * The order of a resource's deliveries is its source events' order in their stream (`source_seq`, then `seq`),
   * and a delivery waits until `floors` (each stream's consumer ack floor) has passed its source event: every
   * earlier event of the stream is recorded by then, so none can still arrive and jump ahead of it. A stream
   * without a known floor holds its deliveries. Rows from before the source positions keep the insertion order.
   */
  async claimDue(batch: number, leaseSeconds: number, floors: readonly StreamFloor[]): Promise<ClaimedDelivery[]> {
    const rows = await this.db.prepared(
      `with floors as (select * from unnest($3::text[], $4::bigint[]) as f(stream, seq)),
       due as (
         select dl.id from webhook.deliveries dl
         join webhook.endpoints ep on ep.id = dl.endpoint_id
         where dl.status = 'PENDING' and dl.next_attempt_at <= now() and ep.enabled and ep.deleted_at is null
           and (dl.source_seq is null or dl.source_seq <= (select f.seq from floors f where f.stream = dl.source_stream))
           and (dl.resource_key is null or not exists (
             select 1 from webhook.deliveries o
             where o.endpoint_id = dl.endpoint_id and o.resource_key = dl.resource_key and o.status = 'PENDING'
               and (coalesce(o.source_seq, 0), o.seq) < (coalesce(dl.source_seq, 0), dl.seq)))
         order by dl.next_attempt_at, dl.seq
         limit $1
         for update of dl skip locked
       )
       update webhook.deliveries x set next_attempt_at = now() + make_interval(secs => $2)
       from due, webhook.endpoints ep, webhook.events ev
       where x.id = due.id and ep.id = x.endpoint_id and ev.id = x.event_id
       returning x.id, x.company_id, x.endpoint_id, x.event_id, x.attempts, ep.url, ep.secret_sealed, ep.previous_secret_sealed, ep.previous_secret_expires_at, ev.body`,
      [batch, leaseSeconds, floors.map((f) => f.stream), floors.map((f) => f.seq)],
    );
    return rows.map((r) => ({
      id: String(r.id),
      companyId: String(r.company_id),
      endpointId: String(r.endpoint_id),
      eventId: String(r.event_id),
      attempts: Number(r.attempts),
      url: String(r.url),
      secretSealed: String(r.secret_sealed),
      previousSecretSealed: (r.previous_secret_sealed as string | null) ?? null,
      previousSecretExpiresAt: dn(r.previous_secret_expires_at),
      body: String(r.body),
    }));
  }

  async markSucceeded(id: string, responseStatus: number, latencyMs: number): Promise<void> {
    await this.db.prepared(
      `update webhook.deliveries set status = 'SUCCEEDED', attempts = attempts + 1, last_attempt_at = now(), last_response_status = $2,
         last_latency_ms = $3, last_error = null, delivered_at = now() where id = $1 and status = 'PENDING'`,
      [id, responseStatus, latencyMs],
    );
  }

  /** A failed attempt: retried after `retryInSeconds` (never past its horizon, where one last attempt is made), or FAILED once past it. */
  async markAttemptFailed(id: string, r: AttemptFailure): Promise<DeliveryStatus | null> {
    const rows = await this.db.prepared<{ status: DeliveryStatus }>(
      `update webhook.deliveries set attempts = attempts + 1, last_attempt_at = now(), last_response_status = $2, last_latency_ms = $3, last_error = $4,
         status = case when now() >= give_up_at then 'FAILED' else 'PENDING' end,
         next_attempt_at = least(now() + make_interval(secs => $5), give_up_at)
       where id = $1 and status = 'PENDING' returning status`,
      [id, r.responseStatus, r.latencyMs, r.error.slice(0, 500), r.retryInSeconds],
    );
    return rows[0]?.status ?? null; // null: no longer pending (e.g. its endpoint was deleted meanwhile)
  }

  /** Pending deliveries of a disabled endpoint past their horizon end FAILED (enabled ones end after their last attempt). */
  async expireOverdue(): Promise<number> {
    const rows = await this.db.prepared(
      `update webhook.deliveries dl set status = 'FAILED', last_error = coalesce(dl.last_error, 'endpoint disabled; retry horizon reached')
       from webhook.endpoints ep
       where ep.id = dl.endpoint_id and not ep.enabled and dl.status = 'PENDING' and dl.give_up_at < now() returning dl.id`,
    );
    return rows.length;
  }
}
