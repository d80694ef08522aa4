// The companies' webhook endpoints in the fault suite: one receiver on loopback, as an integrator's would be
// (every delivery verified with the Standard Webhooks reference library), that refuses some deliveries so
// that retries and the per-resource order are exercised while the faults run; then the check of what it got
// against the webhook service's delivery log (docs/webhooks.md "Order").
import { createServer } from 'node:http';
import { Webhook } from 'standardwebhooks';
import { WEBHOOK_EVENT_TYPES } from '@wallet/platform';

/** What each company subscribes to: its transfers' and deposits' whole lives (a deposit's returns, which may repeat, aside). */
export const SUBSCRIBED = WEBHOOK_EVENT_TYPES.filter((t) => t.startsWith('transfer.') || (t.startsWith('deposit.') && !t.startsWith('deposit.return')));

/** Every `refuseEvery`-th delivery attempt is answered 503 (a receiver that fails now and then). */
export async function startWebhookReceiver(port, { refuseEvery = 7 } = {}) {
  const receiver = {
    refuseEvery,
    /** endpoint path → its secret, and its id (set when a company's endpoint is created) */
    secrets: new Map(),
    endpoints: new Map(),
    /** Every attempt in arrival order: { path, id, type, status (what we answered), verified } */
    attempts: [],
    server: undefined,
    close() {
      return new Promise((r) => this.server.close(r));
    },
  };
  let n = 0;
  receiver.server = createServer((req, res) => {
    const chunks = [];
    req.on('data', (c) => chunks.push(c));
    req.on('end', () => {
      const raw = Buffer.concat(chunks).toString('utf8');
      const secret = receiver.secrets.get(req.url);
      let verified = false;
      let body;
      try {
        body = new Webhook(secret).verify(raw, req.headers);
        verified = true;
      } catch {
        body = safeJson(raw);
      }
      const status = !verified ? 401 : ++n % refuseEvery === 0 ? 503 : 204;
      receiver.attempts.push({ path: req.url, id: req.headers['webhook-id'], type: body?.type, status, verified });
      res.writeHead(status).end();
    });
  });
  await new Promise((resolve, reject) => {
    receiver.server.once('error', reject);
    receiver.server.listen(port, '127.0.0.1', resolve);
  });
  return receiver;
}

const safeJson = (raw) => {
  try {
    return JSON.parse(raw);
  } catch {
    return undefined;
  }
};

/** Which event of a transfer's or deposit's life must reach the endpoint before which (causal order). */
const BEFORE = [
  ['transfer.created', ['transfer.completed', 'transfer.failed']],
  ['deposit.created', ['deposit.paid', 'deposit.failed', 'deposit.expired', 'deposit.reversed', 'deposit.unassigned']],
  ['deposit.paid', ['deposit.reversed']],
];

/**
 * Waits (up to `waitMs`) until no delivery to the receiver's endpoints is pending, then checks, per endpoint and
 * resource: every delivery SUCCEEDED and reached the receiver (verified); the attempts arrived in the delivery
 * log's order (a later event never tried while an earlier one was pending); one event per type (none emitted
 * twice); and the causal order of BEFORE.
 */
export async function webhookOrderCheck(db, receiver, { waitMs = 60_000 } = {}) {
  const ids = [...receiver.endpoints.values()];
  const until = Date.now() + waitMs;
  let pending;
  do {
    pending = (await db.query(`select count(*)::int as n from webhook.deliveries where status = 'PENDING' and endpoint_id = any($1)`, [ids])).rows[0].n;
    if (pending) await new Promise((r) => setTimeout(r, 500));
  } while (pending && Date.now() < until);
  const v = [];
  if (pending) v.push(`${pending} deliveries still PENDING after ${waitMs / 1000} s`);
  const rows = (
    await db.query(
      `select d.endpoint_id, d.event_id, d.event_type, d.resource_key, d.status, d.seq
         from webhook.deliveries d where d.endpoint_id = any($1) and d.replay_of is null order by coalesce(d.source_seq, 0), d.seq`,
      [ids],
    )
  ).rows;
  // the order the service promises per (endpoint, resource): the source events' stream order (then insertion)
  const position = new Map(); // endpoint|event → { resource, index }
  const byResource = new Map(); // endpoint|resource → [{ event, type }]
  for (const r of rows) {
    if (r.status !== 'PENDING' && r.status !== 'SUCCEEDED') v.push(`delivery of ${r.event_type} ${r.event_id} ended ${r.status}`);
    const k = `${r.endpoint_id}|${r.resource_key ?? r.event_id}`;
    const list = byResource.get(k) ?? [];
    position.set(`${r.endpoint_id}|${r.event_id}`, { resource: k, index: list.length });
    list.push({ event: r.event_id, type: r.event_type });
    byResource.set(k, list);
  }
  const unverified = receiver.attempts.filter((a) => !a.verified).length;
  if (unverified) v.push(`${unverified} deliveries failed Standard Webhooks verification`);
  // arrivals per (endpoint, resource): the log position of each attempt never goes back
  const lastIndex = new Map();
  const received = new Set();
  let outOfOrder = 0;
  for (const a of receiver.attempts) {
    const endpointId = receiver.endpoints.get(a.path);
    const p = position.get(`${endpointId}|${a.id}`);
    if (!p) continue; // a ping or a replay
    const last = lastIndex.get(p.resource) ?? -1;
    if (p.index < last) {
      outOfOrder++;
      if (outOfOrder <= 20) v.push(`${a.type} ${a.id} tried after a later event of ${p.resource.split('|')[1]} (log position ${p.index} < ${last})`);
    }
    lastIndex.set(p.resource, Math.max(last, p.index));
    if (a.status === 204) received.add(`${endpointId}|${a.id}`);
  }
  for (const r of rows)
    if (r.status === 'SUCCEEDED' && !received.has(`${r.endpoint_id}|${r.event_id}`))
      v.push(`${r.event_type} ${r.event_id} SUCCEEDED in the log, never answered 2xx by the receiver`);
  for (const [k, list] of byResource) {
    const types = list.map((e) => e.type);
    for (const t of new Set(types))
      if (types.filter((x) => x === t).length > 1) v.push(`${k.split('|')[1]}: ${t} emitted ${types.filter((x) => x === t).length} times`);
    for (const [first, later] of BEFORE) {
      const i = types.indexOf(first);
      for (const l of later) {
        const j = types.indexOf(l);
        if (i >= 0 && j >= 0 && j < i) v.push(`${k.split('|')[1]}: ${l} delivered before ${first}`);
      }
    }
  }
  return {
    name: `webhooks: ${rows.length} events to ${ids.length} endpoints (${receiver.attempts.length} attempts, every ${receiver.refuseEvery}th refused), each delivered, in order per resource, none twice`,
    violations: v,
  };
}
