// The event catalogue (AsyncAPI 3, served by the gateway at /asyncapi.json, rendered in
// docs/asyncapi.md) stays in step with what the services publish: the committed files equal a fresh
// generation from the protos; the document is valid AsyncAPI 3.0; its subjects are exactly the ones
// the publishing services' code can emit; real payloads (the generated proto code's toJSON) match its
// JSON Schemas; and every message carries an example per subject (gateway/scripts/asyncapi-examples.mjs)
// that its schemas accept and that the generated code encodes to itself.
import { readFileSync, readdirSync, statSync } from 'node:fs';
import { join, relative } from 'node:path';
import { createRequire } from 'node:module';
import { Ajv } from 'ajv';
import addFormatsModule from 'ajv-formats';
import {
  collectKeyEventsV1,
  cobroEventsV1,
  companyEventsV1,
  counterpartyEventsV1,
  depositEventsV1,
  eventsV1,
  ledgerV1,
  policyEventsV1,
  reconciliationEventsV1,
  scheduleEventsV1,
  transferEventsV1,
  walletEventsV1,
} from '@wallet/proto';
import { REPO } from './support/helm.js';

const require = createRequire(import.meta.url);
const addFormats = addFormatsModule as unknown as (ajv: Ajv) => Ajv;
type Generator = {
  ASYNCAPI_JSON: string;
  ASYNCAPI_MD: string;
  SUBJECTS: [string, string, string[], string][];
  buildAsyncApiDocument(): any;
  renderJson(doc: unknown): string;
  renderMarkdown(doc: unknown): string;
};
let gen: Generator;
let doc: any;

beforeAll(async () => {
  gen = await import(join(REPO, 'gateway', 'scripts', 'asyncapi.mjs'));
  doc = gen.buildAsyncApiDocument();
});

/** Services with an outbox relay: the only processes that publish (receipt and webhook only consume); and the gateway (its own OutboxRelay in server.ts, for `company.security_changed`). */
function publishers(): string[] {
  const services = readdirSync(join(REPO, 'services')).filter((s) => {
    try {
      return /relay:\s*\{/.test(readFileSync(join(REPO, 'services', s, 'src', 'compose.ts'), 'utf8'));
    } catch {
      return false;
    }
  });
  return /new OutboxRelay\(/.test(readFileSync(join(REPO, 'gateway', 'src', 'server.ts'), 'utf8')) ? [...services, 'gateway'] : services;
}

/** Where a publisher's code is: services/<name>/src, or gateway/src. */
const srcOf = (publisher: string) => (publisher === 'gateway' ? join(REPO, 'gateway', 'src') : join(REPO, 'services', publisher, 'src'));

function sourceFiles(dir: string, out: string[] = []): string[] {
  for (const name of readdirSync(dir)) {
    const p = join(dir, name);
    if (statSync(p).isDirectory()) {
      if (name !== 'gen' && name !== 'migrations') sourceFiles(p, out);
    } else if (p.endsWith('.ts') && !/\.(spec|test|d)\.ts$/.test(p) && !p.endsWith('/testing.ts')) out.push(p);
  }
  return out;
}

const SUBJECT = '(ledger|transfer|deposit|collectkey|reconciliation|company|cobro|counterparty|schedule)';
/**
 * The WALLETS stream's subjects (`wallet.moved`). `wallet.` is also the prefix of the services' span
 * attributes (`{ 'wallet.transfer_id': id }`): an object key (a literal followed by `:`) is no subject.
 */
const WALLET_SUBJECT = /['"`](wallet\.[a-z_]+)['"`](?!\s*:)/g;

/** Every subject a service's code can publish: subject literals, and `prefix.${kind}` templates resolved through the kind's union type. */
function publishedSubjects(service: string): Map<string, string> {
  const found = new Map<string, string>();
  // The gateway's code names many subjects it does not publish (the webhook event types it lists): only its files that write its outbox count.
  const files = sourceFiles(srcOf(service)).filter((f) => service !== 'gateway' || readFileSync(f, 'utf8').includes('appendOutbox('));
  for (const file of files) {
    const code = readFileSync(file, 'utf8')
      .replace(/\/\*[\s\S]*?\*\//g, '')
      .replace(/(^|[^:])\/\/.*$/gm, '$1');
    const where = relative(REPO, file);
    for (const m of code.matchAll(new RegExp(`['"\`](${SUBJECT}\\.[a-z_]+)['"\`]`, 'g'))) found.set(m[1]!, where);
    for (const m of code.matchAll(WALLET_SUBJECT)) found.set(m[1]!, where);
    for (const m of code.matchAll(new RegExp(`\`${SUBJECT}\\.\\$\\{(\\w+)\\}\``, 'g'))) {
      // `deposit.${kind}` in a function taking `kind: DepositEventKind`, with `type DepositEventKind = 'a' | 'b'`.
      const param = new RegExp(`\\b${m[2]}\\s*:\\s*(\\w+)`).exec(code)?.[1];
      const union = param && new RegExp(`type\\s+${param}\\s*=\\s*([^;]+);`).exec(code)?.[1];
      if (!union) throw new Error(`${where}: cannot resolve the subjects of \`${m[0]}\``);
      for (const k of union.matchAll(/'([a-z_]+)'/g)) found.set(`${m[1]}.${k[1]}`, where);
    }
  }
  return found;
}

describe('event catalogue (AsyncAPI)', () => {
  it('is committed as generated: gateway asset and docs/asyncapi.md (run node gateway/scripts/asyncapi.mjs)', () => {
    expect(readFileSync(gen.ASYNCAPI_JSON, 'utf8')).toBe(gen.renderJson(doc));
    expect(readFileSync(gen.ASYNCAPI_MD, 'utf8')).toBe(gen.renderMarkdown(doc));
    expect(readFileSync(join(REPO, 'docs', 'events.md'), 'utf8')).toContain('(asyncapi.md)');
  });

  it('is a valid AsyncAPI 3.0 document (official JSON Schema)', () => {
    const specs = require('@asyncapi/specs');
    const ajv = addFormats(new Ajv({ strict: false, allErrors: true, validateFormats: true }));
    // The spec bundles the draft-07 meta-schema, which Ajv already has: drop the copy.
    const schema = structuredClone(specs.schemas['3.0.0']);
    delete schema.definitions['http://json-schema.org/draft-07/schema'];
    const validate = ajv.compile(schema);
    const ok = validate(doc);
    expect(validate.errors ?? []).toEqual([]);
    expect(ok).toBe(true);
    // Not vacuous: a broken operation is caught.
    const broken = structuredClone(doc);
    broken.operations['publish.transfer.created'].action = 'publish';
    expect(validate(broken)).toBe(false);
  });

  it('lists exactly the subjects the services publish, each on its stream, from the right publisher', () => {
    const services = publishers().sort();
    expect(services).toEqual(['collect-key', 'gateway', 'ledger', 'pse-deposit', 'reconciliation', 'transfer']);
    const published = new Map<string, Set<string>>();
    for (const s of services) for (const subject of publishedSubjects(s).keys()) published.set(subject, (published.get(subject) ?? new Set()).add(s));
    const documented = Object.keys(doc.channels);
    expect([...published.keys()].sort()).toEqual([...documented].sort());
    for (const [subject, by] of published) expect([subject, doc.channels[subject]['x-publishers'].slice().sort()]).toEqual([subject, [...by].sort()]);
    // The approval subjects (multi-signature sends) are there.
    expect(documented).toEqual(expect.arrayContaining(['transfer.awaiting_approval', 'transfer.approved', 'transfer.rejected', 'transfer.expired']));
    // Streams match the platform's STREAMS.
    const bus = readFileSync(join(REPO, 'services', 'platform', 'src', 'bus', 'bus.ts'), 'utf8');
    for (const ch of Object.values<any>(doc.channels)) {
      const prefix = new RegExp(`${ch['x-stream']}: '([a-z]+)'`).exec(bus)?.[1];
      expect([ch.address, prefix]).toEqual([ch.address, ch.address.split('.')[0]]);
    }
  });

  it('documents the CloudEvents headers every event carries', () => {
    const headers = doc.components.schemas.CloudEventHeaders;
    const bus = readFileSync(join(REPO, 'services', 'platform', 'src', 'bus', 'bus.ts'), 'utf8');
    const set = [...bus.matchAll(/h\.set\('([^']+)'/g)].map((m) => m[1]!);
    expect(set.length).toBeGreaterThan(5);
    expect(Object.keys(headers.properties).sort()).toEqual([...set, 'Nats-Msg-Id'].sort());
    for (const m of Object.values<any>(doc.components.messages)) expect(m.headers).toEqual({ $ref: '#/components/schemas/CloudEventHeaders' });
  });

  it('describes the payloads exactly as the services encode them (proto3 JSON from the generated code)', () => {
    const ajv = addFormats(new Ajv({ strict: false, allErrors: true }));
    ajv.addSchema({ $id: 'asyncapi', components: doc.components });
    const check = (message: string, payload: unknown) => {
      const validate = ajv.getSchema(`asyncapi#/components/schemas/${message}`)!;
      const ok = validate(payload);
      expect([message, validate.errors ?? []]).toEqual([message, []]);
      return ok;
    };
    const at = new Date('2026-11-21T10:00:00.000Z');
    const transfer = transferEventsV1.TransferEvent.toJSON(
      transferEventsV1.TransferEvent.fromJSON({
        eventId: 'e1',
        transferId: 't1',
        companyId: 'c1',
        rail: 'RAIL_BREB',
        status: 'MOVEMENT_STATUS_AWAITING_APPROVAL',
        amount: '100000',
        totalFee: '300',
        ivaAmount: '57',
        netAmount: '99643',
        targetName: 'Ana',
        targetDocument: '123',
        reference: 'r',
        description: 'd',
        bankName: 'b',
        bankAccountType: 'SAVINGS',
        bankAccountNumberMasked: '****1234',
        providerTransferId: 'p',
        errorMessage: 'x',
        apiKeyId: 'k',
        createdAt: at.toISOString(),
        completedAt: at.toISOString(),
        occurredAt: at.toISOString(),
        brebKeyType: 'PHONE',
        brebKeyValue: '3001234567',
        approvalId: 'a1',
        approvalThreshold: 2,
        approvalExpiresAt: at.toISOString(),
        approvedBy: ['x@y.co'],
        rejectedBy: 'z@y.co',
      }),
    );
    expect(Object.keys(transfer as object).length).toBeGreaterThan(25);
    check('wallet.events.v1.TransferEvent', transfer);
    check(
      'wallet.events.v1.LedgerPostingRecorded',
      eventsV1.LedgerPostingRecorded.toJSON({
        eventId: 'e',
        postingId: 'p',
        kind: 'credit',
        companyId: 'c',
        rail: ledgerV1.Rail.BREB,
        movementId: 'm',
        holdId: 'h',
        entries: [
          { account: 'funding', amount: -100000n as never },
          { account: 'wallet_available:c:BREB', amount: 100000n as never },
        ],
        occurredAt: at,
        idempotencyKey: 'i',
      } as never),
    );
    check(
      'wallet.events.v1.LedgerWalletsOpened',
      eventsV1.LedgerWalletsOpened.toJSON({ eventId: 'e', companyId: 'c', rails: [ledgerV1.Rail.BREB, ledgerV1.Rail.ACH], occurredAt: at } as never),
    );
    check(
      'wallet.events.v1.DepositEvent',
      depositEventsV1.DepositEvent.toJSON(
        depositEventsV1.DepositEvent.fromJSON({
          eventId: 'e',
          companyId: 'c',
          occurredAt: at.toISOString(),
          deposit: {
            id: 'dep_1',
            status: 'ASSIGNED',
            amountCents: '5000',
            feeAmountCents: '10',
            ivaAmountCents: '2',
            netAmountCents: '4988',
            currency: 'COP',
            source: 'BREB',
            brebKey: { id: 'k', externalId: 'x', name: 'n', value: 'v' },
            createdAt: at.toISOString(),
            expiresAt: at.toISOString(),
          },
        }),
      ),
    );
    check(
      'wallet.events.v1.CollectKeyEvent',
      collectKeyEventsV1.CollectKeyEvent.toJSON(
        collectKeyEventsV1.CollectKeyEvent.fromJSON({ eventId: 'e', companyId: 'c', key: { id: 'bkey_1' }, occurredAt: at.toISOString() }),
      ),
    );
    const run = {
      id: `run_${'a'.repeat(32)}`,
      rail: 'breb',
      date: '2026-11-20',
      trigger: 'SCHEDULE',
      status: 'RECONCILED',
      requestedBy: 'scheduler',
      startedAt: at,
      finishedAt: at,
      reportLines: 2n,
      reportAmountCents: 400013n,
      reportFeeCents: 0n,
      reportNetCents: 150000n,
      oursCount: 2n,
      oursAmountCents: 400013n,
      oursNetCents: 150000n,
      matchedCount: 1n,
      matchedAmountCents: 150000n,
      breaksTotal: 1n,
      breaksOpened: 1n,
      breaksByKind: { amount_mismatch: 1n },
    };
    check('wallet.events.v1.ReconciliationCompleted', reconciliationEventsV1.ReconciliationCompleted.toJSON({ run }));
    check(
      'wallet.events.v1.ReconciliationCompleted',
      reconciliationEventsV1.ReconciliationCompleted.toJSON({ run: { ...run, status: 'REJECTED', rejectReason: 'TRAILER_MISMATCH', detail: 'lines 3 != 2' } }),
    );
    check(
      'wallet.events.v1.ReconciliationBreak',
      reconciliationEventsV1.ReconciliationBreak.toJSON({
        break: {
          key: 'breb:2026-11-20:amount_mismatch:brb_1',
          kind: 'amount_mismatch',
          rail: 'breb',
          date: '2026-11-20',
          ourId: 't1',
          providerId: 'brb_1',
          oursJson: '{}',
          theirsJson: '{}',
          status: 'OPEN',
          runId: run.id,
          lastSeenRunId: run.id,
          openedAt: at,
          exceptionId: `exc_${'b'.repeat(32)}`,
          differenceCents: -100n,
        },
      }),
    );
    check(
      'wallet.events.v1.CompanySecurityChanged',
      companyEventsV1.CompanySecurityChanged.toJSON({
        eventId: 'e',
        companyId: 'c',
        change: 'API_KEY_REVOKED',
        summary: 's',
        actorKind: 'operator',
        actorId: 'o',
        approvalRequestId: 'a',
        effectiveAt: at,
        detailsJson: '{}',
        occurredAt: at,
      }),
    );
    check(
      'wallet.events.v1.WalletMoved',
      walletEventsV1.WalletMoved.toJSON({
        eventId: 'e',
        companyId: 'c',
        moveId: 'm',
        fromRail: ledgerV1.Rail.ACH,
        toRail: ledgerV1.Rail.BREB,
        amountCents: 150000n,
        reference: 'r',
        description: 'd',
        debitMovementId: 'd1',
        creditMovementId: 'c1',
        apiKeyId: 'k',
        occurredAt: at,
      }),
    );
    // Not vacuous: a field the schema does not know, or an amount as a number, is refused.
    const validate = ajv.getSchema('asyncapi#/components/schemas/wallet.events.v1.TransferEvent')!;
    expect(validate({ ...(transfer as object), unknownField: 1 })).toBe(false);
    expect(validate({ ...(transfer as object), amount: 100000 })).toBe(false);
  });
});

/** The generated codec (ts-proto) of an event message, by its proto full name, e.g. wallet.events.v1.CobroEvent. */
function codecOf(fullName: string): { fromJSON(o: unknown): unknown; toJSON(m: unknown): unknown } {
  const namespaces = [
    cobroEventsV1,
    collectKeyEventsV1,
    companyEventsV1,
    counterpartyEventsV1,
    depositEventsV1,
    eventsV1,
    policyEventsV1,
    reconciliationEventsV1,
    scheduleEventsV1,
    transferEventsV1,
    walletEventsV1,
  ] as unknown as Record<string, any>[];
  const name = fullName.split('.').pop()!;
  const found = namespaces.map((ns) => ns[name]).filter((c) => typeof c?.fromJSON === 'function' && typeof c?.toJSON === 'function');
  if (found.length !== 1) throw new Error(`${fullName}: ${found.length} generated codecs`);
  return found[0];
}

describe('event catalogue examples', () => {
  type Example = { name: string; summary: string; headers: Record<string, string>; payload: any };
  const messages = () => Object.entries<any>(doc.components.messages);
  const examples = () => messages().flatMap(([id, m]) => (m.examples as Example[]).map((e) => ({ id, message: m, ...e })));

  /** Ajv on the document's schemas (AsyncAPI Schema, a draft-07 superset), strict: only the generator's x- annotations are declared. */
  function compiler(): Ajv {
    const ajv = addFormats(new Ajv({ strict: true, allErrors: true, validateFormats: true }));
    ajv.addVocabulary(['components', 'x-proto-field', 'x-proto-optional', 'x-proto-message', 'x-proto-type', 'x-proto-enum']);
    ajv.addSchema({ $id: 'asyncapi', components: doc.components });
    return ajv;
  }

  it('gives every message an example, and every subject one of its own on its message', () => {
    expect(messages().length).toBeGreaterThanOrEqual(19);
    for (const [id, m] of messages()) expect([id, m.examples?.length > 0]).toEqual([id, true]);
    const named = examples().map((e) => e.name);
    expect(named.slice().sort()).toEqual(Object.keys(doc.channels).sort());
    for (const e of examples()) {
      // The example sits on the message its subject's channel carries.
      expect([e.name, Object.values<any>(doc.channels[e.name].messages)[0].$ref]).toEqual([e.name, `#/components/messages/${e.id}`]);
      expect(e.summary.length).toBeGreaterThan(20);
    }
    // In particular the cobro, return, transfer, deposit, ledger and company events.
    expect(named).toEqual(
      expect.arrayContaining([
        ...['created', 'partially_paid', 'paid', 'expired', 'cancelled', 'payment_reversed'].map((k) => `cobro.${k}`),
        'deposit.returned',
        'deposit.return_failed',
        'company.security_changed',
        'company.policy_changed',
      ]),
    );
  });

  it('is refused by the generator when a subject has no example, or an example names no subject', async () => {
    const { EXAMPLES } = await import(join(REPO, 'gateway', 'scripts', 'asyncapi-examples.mjs'));
    const paid = EXAMPLES['cobro.paid'];
    try {
      delete EXAMPLES['cobro.paid'];
      expect(() => gen.buildAsyncApiDocument()).toThrow('no example for cobro.paid');
      EXAMPLES['cobro.paid'] = paid;
      EXAMPLES['cobro.refunded'] = paid;
      expect(() => gen.buildAsyncApiDocument()).toThrow('examples for subjects the registry lacks: cobro.refunded');
    } finally {
      EXAMPLES['cobro.paid'] = paid;
      delete EXAMPLES['cobro.refunded'];
    }
  });

  it("validates every example's payload and headers against its message's schemas (Ajv, strict)", () => {
    const ajv = compiler();
    for (const e of examples()) {
      const payload = ajv.getSchema(`asyncapi${e.message.payload.$ref}`)!;
      expect([e.name, payload(e.payload), payload.errors ?? []]).toEqual([e.name, true, []]);
      const headers = ajv.getSchema(`asyncapi${e.message.headers.$ref}`)!;
      expect([e.name, headers(e.headers), headers.errors ?? []]).toEqual([e.name, true, []]);
      expect(e.headers['ce-type']).toBe(e.name);
      expect(e.headers['Nats-Msg-Id']).toBe(e.headers['ce-id']);
      if (e.payload.eventId !== undefined) expect(e.headers['ce-id']).toBe(e.payload.eventId);
      expect(doc.channels[e.name]['x-publishers']).toContain(e.headers['ce-source']);
    }
    // Not vacuous: an amount as a number, a field the schema lacks, or a bad enum is refused.
    const cobro = examples().find((e) => e.name === 'cobro.paid')!;
    const validate = ajv.getSchema(`asyncapi${cobro.message.payload.$ref}`)!;
    expect(validate({ ...cobro.payload, cobro: { ...cobro.payload.cobro, paidAmountCents: 476000000 } })).toBe(false);
    expect(validate({ ...cobro.payload, paidAt: cobro.payload.occurredAt })).toBe(false);
    const transfer = examples().find((e) => e.name === 'transfer.created')!;
    expect(ajv.getSchema(`asyncapi${transfer.message.payload.$ref}`)!({ ...transfer.payload, rail: 'BREB' })).toBe(false);
  });

  it('writes every example exactly as the services encode it (a round trip through the generated proto code)', () => {
    for (const e of examples()) {
      const codec = codecOf(e.message['x-proto-message']);
      const again = JSON.parse(JSON.stringify(codec.toJSON(codec.fromJSON(e.payload))));
      expect([e.name, again]).toEqual([e.name, e.payload]);
    }
  });

  it('keeps the books of its examples: postings sum to zero, deposits are net of fee and IVA', () => {
    for (const e of examples()) {
      if (e.id === 'LedgerPostingRecorded') {
        expect([e.name, e.payload.entries.reduce((s: bigint, x: any) => s + BigInt(x.amount), 0n)]).toEqual([e.name, 0n]);
      }
      const d = e.payload.deposit;
      if (d?.netAmountCents !== undefined) {
        expect([e.name, BigInt(d.amountCents) - BigInt(d.feeAmountCents ?? 0) - BigInt(d.ivaAmountCents ?? 0)]).toEqual([e.name, BigInt(d.netAmountCents)]);
      }
    }
  });
});
