// The event catalogue as an AsyncAPI 3 document, generated from the proto event messages
// (proto/wallet/events/v1/*.proto, parsed with protobufjs into JSON Schemas of their proto3 JSON
// form) and the registry of subjects below. Writes two committed files:
//   gateway/src/openapi/assets/asyncapi.json  served at GET /asyncapi.json (copied to dist at build)
//   docs/asyncapi.md                           the same document rendered for people
// Run after changing a subject or an event message:  node gateway/scripts/asyncapi.mjs
// test/deploy/event-catalogue.test.ts fails when the committed files differ from a fresh run, or when
// the services can publish a subject the registry lacks (or the registry lists one nobody publishes).
// Every subject has an example event in ./asyncapi-examples.mjs (its message's `examples`, one per
// subject): generation fails when a subject has none or an example names no subject, and the test
// validates each against its message's schemas.
import { readFileSync, writeFileSync } from 'node:fs';
import { dirname, join } from 'node:path';
import { fileURLToPath, pathToFileURL } from 'node:url';
import protobuf from 'protobufjs';
import { EXAMPLES, exampleHeaders } from './asyncapi-examples.mjs';

const repo = join(dirname(fileURLToPath(import.meta.url)), '..', '..');
export const ASYNCAPI_JSON = join(repo, 'gateway', 'src', 'openapi', 'assets', 'asyncapi.json');
export const ASYNCAPI_MD = join(repo, 'docs', 'asyncapi.md');
const PROTO_ROOT = join(repo, 'proto');

/** The product's streams (services/platform/src/bus/bus.ts STREAMS): file storage, 30 days, 10-minute duplicate window. */
export const STREAMS = {
  LEDGER: { subjects: 'ledger.>', owner: 'ledger' },
  TRANSFERS: { subjects: 'transfer.>', owner: 'transfer' },
  DEPOSITS: { subjects: 'deposit.>', owner: 'pse-deposit' },
  COLLECT_KEYS: { subjects: 'collectkey.>', owner: 'collect-key' },
  RECONCILIATION: { subjects: 'reconciliation.>', owner: 'reconciliation' },
  // The gateway's security changes and the transfer service's approval-policy changes (docs/policies.md).
  COMPANIES: { subjects: 'company.>', owner: 'gateway' },
  COBROS: { subjects: 'cobro.>', owner: 'pse-deposit' },
  COUNTERPARTIES: { subjects: 'counterparty.>', owner: 'transfer' },
  // The ledger's events about a company's wallets (docs/wallet-moves.md, docs/balance-alerts.md).
  WALLETS: { subjects: 'wallet.>', owner: 'ledger' },
  // The gateway's scheduled payouts (docs/schedules.md).
  SCHEDULES: { subjects: 'schedule.>', owner: 'gateway' },
};

const LEDGER = 'wallet.events.v1.LedgerPostingRecorded';
const TRANSFER = 'wallet.events.v1.TransferEvent';
const DEPOSIT = 'wallet.events.v1.DepositEvent';
const COLLECT_KEY = 'wallet.events.v1.CollectKeyEvent';
const COBRO = 'wallet.events.v1.CobroEvent';
const ALERT = 'wallet.events.v1.WalletBalanceAlert';

/** Every subject the product publishes: [subject, payload message, publishers, when]. */
export const SUBJECTS = [
  ['ledger.wallets_opened', 'wallet.events.v1.LedgerWalletsOpened', ['ledger'], "A company's wallets were provisioned."],
  [
    'ledger.journal_head_recorded',
    'wallet.events.v1.LedgerJournalHeadRecorded',
    ['ledger'],
    "The tamper-evident journal's head at the close of a Bogotá day (docs/journal.md): keep it outside our systems; the journal must keep passing through it.",
  ],
  ['ledger.credited', LEDGER, ['ledger'], 'Admin credit (BALANCE_ADD): funding −X, wallet_available +X.'],
  ['ledger.fee_charged', LEDGER, ['ledger'], 'Admin fee charge (FEE_CHARGE): available −(fee+IVA), fee_revenue +fee, iva_payable +IVA.'],
  ['ledger.reserved', LEDGER, ['ledger'], "A send's funds were reserved (hold opened): available −T, pending_out +T."],
  ['ledger.committed', LEDGER, ['ledger'], 'The rail confirmed: the hold was committed (pending_out −T, rail_clearing, fee_revenue, iva_payable).'],
  ['ledger.released', LEDGER, ['ledger'], 'A send failed, was rejected or expired: the hold was released (pending_out −T, available +T).'],
  ['ledger.inflow_recorded', LEDGER, ['ledger'], 'PSE paid / Bre-B received: settlement −G, available +N, fee, IVA (or unassigned_funds).'],
  ['ledger.inflow_reversed', LEDGER, ['ledger'], "A provider reversed a PSE payment: the paid posting's entries negated."],
  [
    'ledger.correction_posted',
    LEDGER,
    ['ledger'],
    'An operator resolved a money exception with a correcting entry (write-off: operational_losses −amount, rail_clearing +amount); no company wallet moves.',
  ],
  [
    'ledger.moved',
    LEDGER,
    ['ledger'],
    "A move between a company's own wallets (kind `move`): wallet_available(from) −X, wallet_available(to) +X, no fee; its public event is wallet.moved.",
  ],
  [
    'wallet.moved',
    'wallet.events.v1.WalletMoved',
    ['ledger'],
    "Money moved between a company's own wallets (BREB ↔ ACH), instantly and without fee: one posting, wallet_available(from) −amount, wallet_available(to) +amount; both legs COMPLETED (docs/wallet-moves.md).",
  ],
  [
    'schedule.run_started',
    'wallet.events.v1.ScheduleRunStarted',
    ['gateway'],
    'A run of a schedule made its transfer (an ordinary send, under the key `schedule:<id>:<nominal time>`) or its move (docs/schedules.md).',
  ],
  [
    'schedule.run_failed',
    'wallet.events.v1.ScheduleRunFailed',
    ['gateway'],
    'A run of a schedule could not be made (e.g. INSUFFICIENT_BALANCE, POLICY_REFUSED): nothing moved, and the schedule goes on.',
  ],
  [
    'schedule.run_skipped',
    'wallet.events.v1.ScheduleRunSkipped',
    ['gateway'],
    'A run of a schedule had nothing to do (a top-up whose wallet already held its target).',
  ],
  [
    'wallet.balance_low',
    ALERT,
    ['ledger'],
    "A wallet's available balance fell below its low alert threshold (state LOW; docs/balance-alerts.md). Once per crossing: not again until it recovered.",
  ],
  [
    'wallet.balance_recovered',
    ALERT,
    ['ledger'],
    "A LOW wallet's available balance is back at its low threshold plus the hysteresis or more (state NORMAL; docs/balance-alerts.md).",
  ],
  ['wallet.balance_high', ALERT, ['ledger'], "A wallet's available balance rose above its high alert threshold (state HIGH; docs/balance-alerts.md)."],
  [
    'wallet.balance_normal',
    ALERT,
    ['ledger'],
    "A HIGH wallet's available balance is back at its high threshold minus the hysteresis or less (state NORMAL; docs/balance-alerts.md).",
  ],
  ['transfer.created', TRANSFER, ['transfer'], 'The send was accepted: funds reserved in the ledger (status PENDING).'],
  ['transfer.dispatched', TRANSFER, ['transfer'], 'The rail took it (providerTransferId set).'],
  ['transfer.completed', TRANSFER, ['transfer'], 'The rail confirmed; the ledger hold was committed (completedAt).'],
  ['transfer.failed', TRANSFER, ['transfer'], 'The rail refused it or dispatch timed out; the hold was released (errorMessage).'],
  ['transfer.awaiting_approval', TRANSFER, ['transfer'], 'A multi-signature send (company threshold ≥ 2) is waiting for its approvals; funds are reserved.'],
  ['transfer.approved', TRANSFER, ['transfer'], 'The approval quorum was reached; the send goes on to the rail (EXECUTING).'],
  ['transfer.rejected', TRANSFER, ['transfer'], 'An approver rejected the send; its funds were released (REJECTED).'],
  ['transfer.expired', TRANSFER, ['transfer'], 'The approvals did not reach the quorum before expiry; the funds were released (EXPIRED).'],
  [
    'transfer.batch_validated',
    'wallet.events.v1.BatchEvent',
    ['transfer'],
    'A bulk payout was uploaded and validated (state VALIDATED or REJECTED, with its counts and totals); no money moved.',
  ],
  [
    'transfer.batch_completed',
    'wallet.events.v1.BatchEvent',
    ['transfer'],
    'Every executed item of a bulk payout is final: COMPLETED, PARTIALLY_FAILED or FAILED.',
  ],
  [
    'counterparty.verified',
    'wallet.events.v1.CounterpartyEvent',
    ['transfer'],
    "A counterparty's verification succeeded: the Bre-B directory named the holder given, or the ACH rail accepted its prenote.",
  ],
  [
    'counterparty.verification_failed',
    'wallet.events.v1.CounterpartyEvent',
    ['transfer'],
    "A counterparty's verification failed (verification.reasonCode and reason): the key is unknown or names another holder, or the ACH rail rejected its prenote.",
  ],
  ['deposit.created', DEPOSIT, ['pse-deposit'], 'A PSE link was created (PENDING_CONFIRM).'],
  [
    'deposit.paid',
    DEPOSIT,
    ['pse-deposit', 'collect-key'],
    'Paid and credited (ASSIGNED): the net is in the wallet. Also when a held (UNASSIGNED) Bre-B payment is assigned to its company (same deposit id, now with its fees).',
  ],
  ['deposit.failed', DEPOSIT, ['pse-deposit'], "The payer's attempt failed."],
  ['deposit.expired', DEPOSIT, ['pse-deposit'], 'Unpaid past its TTL.'],
  [
    'deposit.reversed',
    DEPOSIT,
    ['pse-deposit', 'collect-key'],
    'The provider reversed it; the credit was debited back. collect-key: a held (UNASSIGNED) Bre-B payment was returned to the payer through the network (shown REVERSED).',
  ],
  [
    'deposit.unassigned',
    DEPOSIT,
    ['collect-key'],
    'A Bre-B payment to a deleted or suspended key: received, not credited (held; it can be assigned to its company later, then `deposit.paid` of the same deposit).',
  ],
  [
    'deposit.returned',
    'wallet.events.v1.DepositReturnEvent',
    ['collect-key', 'pse-deposit'],
    'A return (devolución) of a credited payment reached its payer: the amount left the wallet through the rail it came by (docs/returns.md). The payload carries the return, not the deposit.',
  ],
  [
    'deposit.return_failed',
    'wallet.events.v1.DepositReturnEvent',
    ['collect-key', 'pse-deposit'],
    'A return ended without moving money (the wallet could not cover it, or the rail refused it and the hold was released); `failureCode` says why.',
  ],
  ['collectkey.created', COLLECT_KEY, ['collect-key'], 'A key was issued (registered at the Bre-B directory).'],
  ['collectkey.deleted', COLLECT_KEY, ['collect-key'], 'A key was deleted (unregistered).'],
  ['collectkey.state_changed', COLLECT_KEY, ['collect-key'], 'An operator suspended or reactivated a key.'],
  ['collectkey.qr_issued', COLLECT_KEY, ['collect-key'], 'A static QR was issued for a key.'],
  [
    'cobro.created',
    COBRO,
    ['pse-deposit'],
    'A cobro (an expected payment) was opened: its dynamic Bre-B key is registered and its QR payload is ready (docs/cobros.md).',
  ],
  [
    'cobro.partially_paid',
    COBRO,
    ['pse-deposit'],
    'A payment received by expiresAt was matched to the cobro and the total is still short of its amount (or minimum); `depositId` names the payment.',
  ],
  ['cobro.paid', COBRO, ['pse-deposit'], 'A matched payment completed the cobro (an open-amount cobro: its first payment); `depositId` names it.'],
  [
    'cobro.expired',
    COBRO,
    ['pse-deposit'],
    'The cobro passed expiresAt (plus the grace for payments on their way) unpaid or partly paid; its key was deleted.',
  ],
  ['cobro.cancelled', COBRO, ['pse-deposit'], 'The company cancelled the cobro; its key was deleted. What was paid stays credited.'],
  [
    'cobro.payment_reversed',
    COBRO,
    ['pse-deposit'],
    'The provider reversed a payment the cobro counted (a PSE payment debited back): it no longer counts, `paidAmountCents` went down, and the status follows (PAID still, OPEN or PARTIALLY_PAID before expiresAt, EXPIRED after it); `depositId` names the payment (its `reversedCents` is its gross).',
  ],
  [
    'reconciliation.completed',
    'wallet.events.v1.ReconciliationCompleted',
    ['reconciliation'],
    "A reconciliation run of a rail and date ended (RECONCILED, REJECTED or FAILED), with its counts and both sides' effect on the clearing account.",
  ],
  [
    'reconciliation.break',
    'wallet.events.v1.ReconciliationBreak',
    ['reconciliation'],
    'A run found a new break (once per break key, whatever the number of runs); its money exception was opened with it.',
  ],
  [
    'company.security_changed',
    'wallet.events.v1.CompanySecurityChanged',
    ['gateway'],
    "A change to a company's multi-signature threshold, users, API keys, limits, fees or status was requested, made or rejected; its active dashboard admins are e-mailed too.",
  ],
  [
    'company.policy_changed',
    'wallet.events.v1.ApprovalPolicyChanged',
    ['transfer'],
    "A new version of the company's approval policy reached its quorum of ADMIN signatures; it decides the company's payments from effectiveAt (after the change delay) on (docs/policies.md).",
  ],
];

const streamOf = (subject) => Object.entries(STREAMS).find(([, s]) => subject.startsWith(s.subjects.slice(0, -1)))?.[0];

/** CloudEvents binary-mode headers every event carries (services/platform/src/bus/bus.ts publish). */
const HEADERS = {
  type: 'object',
  required: ['ce-id', 'ce-type', 'ce-source', 'ce-time', 'ce-specversion', 'content-type', 'Nats-Msg-Id'],
  properties: {
    'ce-id': { type: 'string', format: 'uuid', description: 'The event id (= payload eventId). De-duplicate on it: delivery is at least once.' },
    'ce-type': { type: 'string', description: 'The subject without namespace, e.g. `transfer.created`.' },
    'ce-source': { type: 'string', description: 'The publishing service, e.g. `transfer`.' },
    'ce-time': { type: 'string', format: 'date-time', description: 'When the event was written to the outbox (RFC 3339).' },
    'ce-specversion': { type: 'string', const: '1.0' },
    'content-type': { type: 'string', const: 'application/json' },
    traceparent: { type: 'string', description: 'W3C trace context of the change, when tracing is on.' },
    tracestate: { type: 'string', description: 'W3C trace state that goes with traceparent, when there is one.' },
    'Nats-Msg-Id': { type: 'string', description: 'Same as ce-id: JetStream drops a re-publish within the 10-minute duplicate window.' },
  },
};

const INT64 = new Set(['int64', 'uint64', 'sint64', 'fixed64', 'sfixed64']);
const INT32 = new Set(['int32', 'uint32', 'sint32', 'fixed32', 'sfixed32']);
const WELL_KNOWN = {
  'google.protobuf.Timestamp': { type: 'string', format: 'date-time' },
  'google.protobuf.Struct': { type: 'object', additionalProperties: true, description: 'A JSON object (proto3 JSON of google.protobuf.Struct).' },
};

const schemaName = (fullName) => fullName.replace(/^\./, '');
const clean = (comment) => (comment ?? '').replace(/\s+/g, ' ').trim();

/** Loads the event protos (and what they import) with comments kept. */
export function loadProtos() {
  const root = new protobuf.Root();
  root.resolvePath = (_origin, target) => {
    if (target.startsWith('google/protobuf/')) return target; // protobufjs ships the well-known types
    return join(PROTO_ROOT, target);
  };
  const files = [
    'cobro_events.proto',
    'collectkey_events.proto',
    'company_events.proto',
    'counterparty_events.proto',
    'deposit_events.proto',
    'ledger_events.proto',
    'policy_events.proto',
    'reconciliation_events.proto',
    'schedule_events.proto',
    'transfer_events.proto',
    'wallet_events.proto',
  ].map((f) => `wallet/events/v1/${f}`);
  root.loadSync(files, { keepCase: false, alternateCommentMode: true });
  root.resolveAll();
  return root;
}

/** JSON Schema (of the proto3 JSON form) of a message and, into `schemas`, of everything it references. */
function messageSchema(type, schemas) {
  const name = schemaName(type.fullName);
  if (WELL_KNOWN[name]) return WELL_KNOWN[name];
  if (!schemas[name]) {
    schemas[name] = {}; // placeholder against cycles
    const properties = {};
    for (const field of type.fieldsArray) {
      let s = fieldSchema(field, schemas);
      if (field.repeated) s = { type: 'array', items: s };
      const description = clean(field.comment);
      const optional = field.options?.proto3_optional || field.partOf?.name?.startsWith('_');
      properties[field.name] = {
        ...s,
        ...(description ? { description: s.description ? `${description} ${s.description}` : description } : {}),
        'x-proto-field': field.id,
        ...(optional ? { 'x-proto-optional': true } : {}),
      };
    }
    schemas[name] = {
      type: 'object',
      title: type.name,
      ...(clean(type.comment) ? { description: clean(type.comment) } : {}),
      'x-proto-message': name,
      properties,
      additionalProperties: false,
    };
  }
  return { $ref: `#/components/schemas/${name}` };
}

function fieldSchema(field, schemas) {
  const t = field.resolvedType;
  if (field.map) {
    return { type: 'object', additionalProperties: t ? typeSchema(t, schemas) : scalarSchema(field.type) };
  }
  return t ? typeSchema(t, schemas) : scalarSchema(field.type);
}

function typeSchema(t, schemas) {
  if (t instanceof protobuf.Enum) {
    const name = schemaName(t.fullName);
    schemas[name] ??= {
      type: 'string',
      title: t.name,
      enum: Object.keys(t.values),
      ...(clean(t.comment) ? { description: clean(t.comment) } : {}),
      'x-proto-enum': name,
    };
    return { $ref: `#/components/schemas/${name}` };
  }
  return messageSchema(t, schemas);
}

function scalarSchema(type) {
  if (type === 'string') return { type: 'string' };
  if (type === 'bool') return { type: 'boolean' };
  if (type === 'bytes') return { type: 'string', contentEncoding: 'base64' };
  if (type === 'double' || type === 'float') return { type: 'number' };
  if (INT32.has(type)) return { type: 'integer' };
  if (INT64.has(type)) return { type: 'string', pattern: '^-?[0-9]+$', 'x-proto-type': type };
  throw new Error(`unsupported proto scalar type ${type}`);
}

const sortKeys = (o) => Object.fromEntries(Object.entries(o).sort(([a], [b]) => a.localeCompare(b)));

/** The AsyncAPI 3.0 document. Deterministic: same protos and registry, same bytes. */
export function buildAsyncApiDocument(version = readVersion()) {
  const root = loadProtos();
  const schemas = {};
  const messages = {};
  const channels = {};
  const operations = {};
  for (const [subject, payload, publishers, when] of SUBJECTS) {
    const stream = streamOf(subject);
    if (!stream) throw new Error(`no stream takes ${subject}`);
    const type = root.lookupType(payload);
    const messageId = type.name;
    messageSchema(type, schemas);
    messages[messageId] ??= {
      name: messageId,
      title: type.name,
      summary: clean(type.comment) || `${type.name} (proto3 JSON)`,
      contentType: 'application/json',
      headers: { $ref: '#/components/schemas/CloudEventHeaders' },
      payload: { $ref: `#/components/schemas/${schemaName(type.fullName)}` },
      'x-proto-message': schemaName(type.fullName),
      examples: [],
    };
    const example = EXAMPLES[subject];
    if (!example) throw new Error(`no example for ${subject}: add one to gateway/scripts/asyncapi-examples.mjs`);
    const source = example.source ?? publishers[0];
    if (!publishers.includes(source)) throw new Error(`the example of ${subject} names ${source}, which does not publish it`);
    messages[messageId].examples.push({
      name: subject,
      summary: example.summary,
      headers: exampleHeaders(subject, source, example.payload),
      payload: example.payload,
    });
    channels[subject] = {
      address: subject,
      title: subject,
      summary: when,
      description: `${when}\n\nStream \`${stream}\` (\`${STREAMS[stream].subjects}\`); published by ${publishers.map((p) => `\`${p}\``).join(', ')}; payload \`${schemaName(type.fullName)}\` as proto3 JSON.`,
      messages: { [messageId]: { $ref: `#/components/messages/${messageId}` } },
      'x-stream': stream,
      'x-publishers': publishers,
    };
    operations[`publish.${subject}`] = {
      action: 'send',
      channel: { $ref: `#/channels/${subject}` },
      summary: `${publishers.join(', ')} publish${publishers.length === 1 ? 'es' : ''} ${subject}`,
      messages: [{ $ref: `#/channels/${subject}/messages/${messageId}` }],
    };
  }
  const stray = Object.keys(EXAMPLES).filter((subject) => !channels[subject]);
  if (stray.length) throw new Error(`examples for subjects the registry lacks: ${stray.join(', ')}`);
  return {
    asyncapi: '3.0.0',
    id: 'urn:payments-wallet:events',
    info: {
      title: 'Payments wallet events',
      version,
      description: [
        "Every NATS JetStream subject the product publishes. Events are written to the owning service's outbox in the",
        'same database transaction as the change they describe and relayed after commit.',
        '',
        '- Streams: ' +
          Object.entries(STREAMS)
            .map(([n, s]) => `\`${n}\` (\`${s.subjects}\`)`)
            .join(', ') +
          '; file storage, 30 days, 10-minute duplicate window.',
        '- In a namespaced deployment (`BUS_NAMESPACE=x`) streams are `X_LEDGER`… and subjects `x.ledger.…`.',
        '- Body: the payload message encoded as proto3 JSON (camelCase fields, int64 as strings, enums by name, timestamps RFC 3339).',
        '- Delivery is at least once: de-duplicate on `ce-id`; do not rely on order (use `occurredAt` and the resource state).',
        '- Versioning: by proto package (`wallet.events.v1`); fields are only added within a version.',
      ].join('\n'),
    },
    defaultContentType: 'application/json',
    servers: {
      nats: {
        host: 'nats:4222',
        protocol: 'nats',
        description: 'The NATS JetStream cluster of the installation (internal; no public access).',
      },
    },
    channels,
    operations,
    components: {
      schemas: sortKeys({ CloudEventHeaders: HEADERS, ...schemas }),
      messages: sortKeys(messages),
    },
  };
}

function readVersion() {
  return JSON.parse(readFileSync(join(repo, 'gateway', 'package.json'), 'utf8')).version;
}

/** docs/asyncapi.md: the same document for people. */
export function renderMarkdown(doc) {
  const out = [];
  const schemaRef = (s) => (s?.$ref ? s.$ref.split('/').pop() : undefined);
  const typeText = (s) => {
    if (!s) return '';
    if (s.$ref) return `[\`${schemaRef(s)}\`](#${anchor(schemaRef(s))})`;
    if (s.type === 'array') return `${typeText(s.items)}[]`;
    if (s.format === 'date-time') return 'timestamp (RFC 3339)';
    if (s['x-proto-type']) return `${s['x-proto-type']} (decimal string)`;
    return s.type ?? '';
  };
  out.push('# Event catalogue (AsyncAPI)', '');
  out.push('<!-- Generated by gateway/scripts/asyncapi.mjs from proto/wallet/events/v1/*.proto; do not edit by hand. -->', '');
  out.push(`The machine-readable document (AsyncAPI ${doc.asyncapi}) is served by the gateway at \`GET /asyncapi.json\`.`);
  out.push('How to consume the events (streams, de-duplication, ordering): [events.md](events.md); a consumer to copy:');
  out.push('[examples/subscriber](examples/subscriber/README.md).', '');
  out.push(doc.info.description, '');
  out.push(
    "Every subject has an example event (its message's `examples` in the JSON document, one per subject, named by the subject;",
    '[below](#examples)): a realistic payload exactly as the service encodes it, and its headers. They live in',
    '`gateway/scripts/asyncapi-examples.mjs`; generation fails when a subject has none, and test/deploy/event-catalogue.test.ts',
    "validates each payload and its headers against its message's schemas (Ajv) and round-trips it through the generated proto code.",
    '',
  );
  out.push('## Headers', '', '| Header | Required | Meaning |', '|---|---|---|');
  const h = doc.components.schemas.CloudEventHeaders;
  for (const [k, v] of Object.entries(h.properties)) {
    out.push(`| \`${k}\` | ${h.required.includes(k) ? 'yes' : 'no'} | ${v.description ?? (v.const ? `\`${v.const}\`` : '')} |`);
  }
  const exampleHeading = (subject) => `Example: \`${subject}\``;
  out.push('', '## Subjects', '', '| Subject | Stream | Publisher | Payload | When |', '|---|---|---|---|---|');
  for (const ch of Object.values(doc.channels)) {
    const msg = Object.values(ch.messages)[0].$ref.split('/').pop();
    const payload = schemaRef(doc.components.messages[msg].payload);
    out.push(
      `| [\`${ch.address}\`](#${anchor(exampleHeading(ch.address))}) | \`${ch['x-stream']}\` | ${ch['x-publishers'].join(', ')} | [\`${msg}\`](#${anchor(payload)}) | ${ch.summary} |`,
    );
  }
  out.push('', '## Payloads', '');
  for (const [name, s] of Object.entries(doc.components.schemas)) {
    if (name === 'CloudEventHeaders') continue;
    out.push(`### ${name}`, '');
    if (s.description) out.push(s.description, '');
    if (s.enum) {
      out.push(`Enum (by name): ${s.enum.map((e) => `\`${e}\``).join(', ')}.`, '');
      continue;
    }
    out.push('| Field | Type | Optional | Notes |', '|---|---|---|---|');
    for (const [f, p] of Object.entries(s.properties)) {
      out.push(`| \`${f}\` | ${typeText(p)} | ${p['x-proto-optional'] ? 'yes' : ''} | ${(p.description ?? '').replace(/\|/g, '\\|')} |`);
    }
    out.push('');
  }
  out.push('## Examples', '', 'One event per subject, as a subscriber receives it. The headers of the first:', '');
  const examples = new Map();
  for (const m of Object.values(doc.components.messages)) for (const e of m.examples) examples.set(e.name, { message: m.name, ...e });
  const first = examples.get(Object.keys(doc.channels)[0]);
  out.push('```json', JSON.stringify(first.headers, null, 2), '```', '');
  for (const subject of Object.keys(doc.channels)) {
    const e = examples.get(subject);
    out.push(`### ${exampleHeading(subject)}`, '', `${e.summary} Payload \`${e.message}\`, from \`${e.headers['ce-source']}\`.`, '');
    out.push('```json', JSON.stringify(e.payload, null, 2), '```', '');
  }
  return (
    out
      .join('\n')
      .replace(/\n{3,}/g, '\n\n')
      .trimEnd() + '\n'
  );
}

function anchor(heading) {
  return heading
    .toLowerCase()
    .replace(/[^a-z0-9 _-]/g, '')
    .replace(/ /g, '-');
}

export function renderJson(doc) {
  return JSON.stringify(doc, null, 2) + '\n';
}

if (import.meta.url === pathToFileURL(process.argv[1] ?? '').href) {
  const doc = buildAsyncApiDocument();
  writeFileSync(ASYNCAPI_JSON, renderJson(doc));
  writeFileSync(ASYNCAPI_MD, renderMarkdown(doc));
  process.stdout.write(`wrote ${ASYNCAPI_JSON} and ${ASYNCAPI_MD} (${Object.keys(doc.channels).length} subjects)\n`);
}
