// One example event per subject of the AsyncAPI document (gateway/scripts/asyncapi.mjs puts them on
// their message as `examples`, and fails when a subject has none or an example names no subject).
// Each payload is written exactly as the publishing service's generated code encodes it (proto3 JSON:
// int64 as decimal strings, enums by name, timestamps RFC 3339 with milliseconds, fields at their
// default value left out); test/deploy/event-catalogue.test.ts checks each one against its message's
// schema and round-trips it through @wallet/proto's fromJSON/toJSON.
//
// One company throughout: Distribuidora Andina S.A.S. (NIT 900123456-8, Bogotá), its BREB and ACH
// wallets, in March 2026. Ids are derived from a name (sha256), so the document stays the same from
// run to run while every id has the shape the service gives it.
import { createHash } from 'node:crypto';

const sha = (s) => createHash('sha256').update(s).digest();
/** A version 4-shaped UUID derived from `seed`. */
export function uuid(seed) {
  const h = sha(`example:${seed}`).toString('hex');
  const variant = ((parseInt(h[16], 16) & 0x3) | 0x8).toString(16);
  return `${h.slice(0, 8)}-${h.slice(8, 12)}-4${h.slice(13, 16)}-${variant}${h.slice(17, 20)}-${h.slice(20, 32)}`;
}
/** `prefix` + `n` lowercase alphanumerics derived from `seed` (dep_, cob_, ret_, bkey_, qr_, cpty_…). */
const rid = (prefix, seed, n = 24) => {
  const alphabet = 'abcdefghijklmnopqrstuvwxyz0123456789';
  return prefix + Array.from(sha(`id:${seed}`).subarray(0, n), (b) => alphabet[b % 36]).join('');
};
const hex = (seed, n) => sha(`hex:${seed}`).toString('hex').slice(0, n);

// EMVCo merchant-presented QR, as services/collect-key/src/domain/emvco.ts writes it (CRC16-CCITT last).
const tlv = (tag, value) => `${tag}${String(value.length).padStart(2, '0')}${value}`;
function crc16(s) {
  let crc = 0xffff;
  for (const b of Buffer.from(s, 'utf8')) {
    crc ^= b << 8;
    for (let i = 0; i < 8; i++) crc = crc & 0x8000 ? ((crc << 1) ^ 0x1021) & 0xffff : (crc << 1) & 0xffff;
  }
  return crc.toString(16).toUpperCase().padStart(4, '0');
}
const emvAmount = (cents) => `${cents.slice(0, -2)}.${cents.slice(-2)}`;
function emvQr({ dynamic, keyValue, amountCents, transactionId, reference, expiresAt }) {
  const body =
    [
      tlv('00', '01'),
      tlv('01', dynamic ? '12' : '11'),
      tlv('26', tlv('00', 'CO.BREB') + tlv('01', keyValue)),
      tlv('52', '0000'),
      tlv('53', '170'),
      ...(amountCents ? [tlv('54', emvAmount(amountCents))] : []),
      tlv('58', 'CO'),
      tlv('59', 'DISTRIBUIDORA ANDINA SAS'),
      tlv('60', 'BOGOTA'),
      tlv('62', tlv('05', dynamic ? transactionId : reference)),
      ...(dynamic ? [tlv('80', tlv('00', 'CO.BREB') + tlv('01', expiresAt.slice(0, 19).replace(/[-T:]/g, '')))] : []),
    ].join('') + '6304';
  return body + crc16(body);
}

// The company, its people and its keys.
const CO = uuid('company:distribuidora-andina');
const API_KEY = uuid('api-key:erp-produccion');
const ADMIN_1 = 'tesoreria@distribuidoraandina.com.co';
const ADMIN_2 = 'gerencia.financiera@distribuidoraandina.com.co';
const wallet = (rail) => `wallet_available:${CO}:${rail}`;
const pendingOut = (rail) => `wallet_pending_out:${CO}:${rail}`;

// A Bre-B send of 1,250,000 COP to a supplier's phone key (fee 1,500 COP + 19 % IVA): T1.
const T1 = {
  id: uuid('transfer:breb-proveedor'),
  amount: '125000000',
  fee: '150000',
  iva: '28500',
  net: '124850000', // amount − fee (services/transfer/src/domain/rails.ts netAmount)
  reserved: '125178500', // amount + fee + IVA
  movementId: uuid('movement:breb-proveedor'),
  holdId: uuid('hold:breb-proveedor'),
  createdAt: '2026-03-10T15:20:41.118Z',
};
const T1_BASE = {
  transferId: T1.id,
  companyId: CO,
  rail: 'RAIL_BREB',
  amount: T1.amount,
  totalFee: T1.fee,
  ivaAmount: T1.iva,
  netAmount: T1.net,
  targetName: 'Lácteos La Sabana S.A.S.',
  targetDocument: '860034313',
  reference: 'OC-2026-00871',
  description: 'Pago factura FE-45821 insumos lácteos',
  apiKeyId: API_KEY,
  createdAt: T1.createdAt,
  brebKeyType: 'PHONE',
  brebKeyValue: '3105557821',
  policyDecision: { policyVersion: 3, ruleId: 'proveedores', action: 'ALLOW' },
};
// An ACH send of 3,480,000 COP to a savings account (fee 4,500 COP + IVA), refused by the rail: T2.
const T2 = { id: uuid('transfer:ach-nomina'), amount: '348000000', fee: '450000', iva: '85500', reserved: '348535500' };
const T2_BASE = {
  transferId: T2.id,
  companyId: CO,
  rail: 'RAIL_ACH',
  amount: T2.amount,
  totalFee: T2.fee,
  ivaAmount: T2.iva,
  netAmount: '347550000',
  targetName: 'Carlos Andrés Rodríguez Mejía',
  targetDocument: '79865432',
  reference: 'NOM-2026-03-0042',
  description: 'Nómina primera quincena marzo',
  bankName: 'BANCOLOMBIA',
  bankAccountType: 'Ahorros',
  bankAccountNumberMasked: '*******8901',
  apiKeyId: API_KEY,
  createdAt: '2026-03-13T13:00:05.402Z',
};
// A multi-signature Bre-B send of 68,000,000 COP (policy rule "big": two signatures): T3.
const T3 = { id: uuid('transfer:breb-maquinaria'), approvalId: `appr_${hex('approval:maquinaria', 32)}` };
const T3_BASE = {
  transferId: T3.id,
  companyId: CO,
  rail: 'RAIL_BREB',
  amount: '6800000000',
  totalFee: '150000',
  ivaAmount: '28500',
  netAmount: '6799850000',
  targetName: 'Maquinaria Industrial del Cauca S.A.S.',
  targetDocument: '901456789',
  reference: 'OC-2026-00902',
  description: 'Anticipo montacargas',
  apiKeyId: API_KEY,
  createdAt: '2026-03-11T16:45:00.231Z',
  brebKeyType: 'ALPHANUM',
  brebKeyValue: '@maqcauca01',
  approvalId: T3.approvalId,
  approvalThreshold: 2,
  approvalExpiresAt: '2026-03-12T16:45:00.231Z',
  policyDecision: { policyVersion: 3, ruleId: 'big', action: 'REQUIRE_APPROVALS', approvals: 2 },
  approvalRoles: ['ADMIN', 'OPERATOR'],
};

// PSE deposit D1 of 2,380,000 COP (fee 2,900 COP + IVA) to the ACH wallet.
const D1 = {
  id: rid('dep_', 'deposit:pse-pagado'),
  gross: '238000000',
  fee: '290000',
  iva: '55100',
  net: '237654900',
  createdAt: '2026-03-10T14:31:07.552Z',
};
const D1_BASE = {
  id: D1.id,
  amountCents: D1.gross,
  currency: 'COP',
  source: 'PSE',
  payerName: 'Ferretería El Tornillo S.A.S.',
  payerDocument: '901234567',
  payerEmail: 'pagos@ferreteriaeltornillo.co',
  payerFirstName: 'Marta',
  payerLastName: 'Quintero',
  createdAt: D1.createdAt,
  internalRef: 'FV-2026-001190',
  paygatewayUrl: 'https://checkout.pse-sandbox.example.co/pay/PSE-7Q2M9X4K',
  expiresAt: '2026-03-10T15:31:07.552Z',
};
const D1_PAID = {
  ...D1_BASE,
  status: 'ASSIGNED',
  feeAmountCents: D1.fee,
  ivaAmountCents: D1.iva,
  netAmountCents: D1.net,
  payerBank: 'BANCO DE BOGOTA',
  providerTransferId: 'PSE-7Q2M9X4K',
  providerConfirmedAt: '2026-03-10T14:36:52.000Z',
};
// A Bre-B payment D4 of 1,800,000 COP, 200,000 COP of which the company returns (it was paid twice).
const D4 = rid('dep_', 'deposit:breb-duplicado');

// Cobros (docs/cobros.md). C1: invoice FV-2026-001284, 4,760,000 COP fixed, paid by Bre-B in two parts.
const C1 = {
  id: rid('cob_', 'cobro:fv-1284'),
  transactionId: 'CB' + hex('txid:fv-1284', 20).toUpperCase(),
  keyId: rid('bkey_', 'cobro-key:fv-1284'),
  keyValue: rid('@', 'cobro-key-value:fv-1284', 10),
  createdAt: '2026-03-10T14:02:11.482Z',
  expiresAt: '2026-03-20T04:59:59.000Z',
};
const C1_BASE = {
  id: C1.id,
  reference: 'FV-2026-001284',
  amountType: 'FIXED',
  amountCents: '476000000',
  currency: 'COP',
  description: 'Factura FV-2026-001284: 40 cajas de tornillería',
  expectedPayer: { document: '901234567', name: 'Ferretería El Tornillo S.A.S.' },
  metadata: { pedido: 'PO-88213', vendedor: 'zona-norte' },
  overpaymentPolicy: 'ACCEPT',
  transactionId: C1.transactionId,
  breb: {
    keyId: C1.keyId,
    keyValue: C1.keyValue,
    qrPayload: emvQr({ dynamic: true, keyValue: C1.keyValue, amountCents: '476000000', transactionId: C1.transactionId, expiresAt: C1.expiresAt }),
  },
  expiresAt: C1.expiresAt,
  createdAt: C1.createdAt,
  methods: ['BREB_QR', 'BREB_KEY'],
  toleranceBelowCents: '2380000', // 0.5 % of the amount: more than the company's 1,000 COP
  toleranceAboveCents: '2380000',
};
const C1_PAY_1 = {
  depositId: rid('dep_', 'deposit:cobro-1284-a'),
  source: 'BREB',
  amountCents: '200000000',
  netAmountCents: '199857200',
  matchedBy: 'TRANSACTION_ID',
  disposition: 'COUNTED',
  payerName: 'Ferretería El Tornillo S.A.S.',
  payerDocument: '901234567',
  receivedAt: '2026-03-12T19:14:03.871Z',
  matchedAt: '2026-03-12T19:14:04.012Z',
};
const C1_PAY_2 = {
  ...C1_PAY_1,
  depositId: rid('dep_', 'deposit:cobro-1284-b'),
  amountCents: '276000000',
  netAmountCents: '275857200',
  matchedBy: 'DYNAMIC_KEY',
  receivedAt: '2026-03-16T15:40:27.305Z',
  matchedAt: '2026-03-16T15:40:27.498Z',
};
// C2: invoice FV-2026-001301, 1,190,000 COP by PSE link; its payment was reversed by the provider.
const C2 = { id: rid('cob_', 'cobro:fv-1301'), pseDeposit: rid('dep_', 'deposit:cobro-1301-pse') };
// C3: 850,000 COP, half paid, expired. C4: an open-amount donation cobro, cancelled.
const C3 = { id: rid('cob_', 'cobro:fv-1288'), keyValue: rid('@', 'cobro-key-value:fv-1288', 10), txid: 'CB' + hex('txid:fv-1288', 20).toUpperCase() };
const C4 = { id: rid('cob_', 'cobro:evento-feria'), keyValue: rid('@', 'cobro-key-value:feria', 10), txid: 'CB' + hex('txid:feria', 20).toUpperCase() };

// The company's static collect key and its QR.
const KEY = {
  id: rid('bkey_', 'collect-key:tienda-chapinero'),
  externalId: `BRB-${hex('collect-key-ext', 12).toUpperCase()}`,
  name: 'Punto de venta Chapinero',
  keyType: 'ALPHANUM',
  keyValue: rid('@', 'collect-key-value:chapinero', 10),
  createdAt: '2026-03-02T16:10:44.903Z',
};

const ALERT_SETTINGS = { lowThresholdCents: '1000000000', highThresholdCents: '50000000000', hysteresisCents: '100000000' };
const BATCH = uuid('batch:nomina-marzo-1');
const SCHEDULE = uuid('schedule:arriendo-bodega');
const runRef = (seq, nominal, kind, due = nominal) => ({
  scheduleId: SCHEDULE,
  companyId: CO,
  runId: uuid(`schedule-run:${seq}`),
  seq,
  nominalAt: nominal,
  dueAt: due,
  runKey: `schedule:${SCHEDULE}:${new Date(Date.parse(nominal) - 5 * 3600_000).toISOString().slice(0, 16)}`,
  actionKind: kind,
});
const RUN_ID = `run_${hex('recon-run:breb:2026-03-12', 32)}`;
const COUNTERPARTY = {
  id: rid('cpty_', 'counterparty:lacteos-sabana'),
  name: 'Lácteos La Sabana (proveedor)',
  rail: 'BREB',
  brebKey: { type: 'PHONE', value: '3105557821' },
  documentTypeId: 8,
  documentNumber: '860034313',
  holderName: 'Lácteos La Sabana S.A.S.',
  tags: ['proveedor', 'lacteos'],
  createdAt: '2026-03-09T20:11:09.340Z',
};

/**
 * Per subject: { summary, payload, source? } (source: the publishing service when the subject has
 * several publishers; otherwise its only one).
 */
export const EXAMPLES = {
  'ledger.wallets_opened': {
    summary: "Distribuidora Andina's BREB and ACH wallets were provisioned when the company was created.",
    payload: { eventId: uuid('evt:ledger.wallets_opened'), companyId: CO, rails: ['RAIL_BREB', 'RAIL_ACH'], occurredAt: '2026-03-02T15:58:30.114Z' },
  },
  'ledger.journal_head_recorded': {
    summary: "The journal's head at the close of Monday 9 March 2026 (Bogotá): 1,843,227 sealed postings.",
    payload: {
      eventId: uuid('evt:ledger.journal_head_recorded'),
      day: '2026-03-09',
      seq: '1843227',
      hash: hex('journal:2026-03-09', 64),
      occurredAt: '2026-03-10T05:00:02.481Z',
    },
  },
  'ledger.credited': {
    summary: 'An operator credited 50,000,000 COP to the BREB wallet (BALANCE_ADD).',
    payload: {
      eventId: uuid('evt:ledger.credited'),
      postingId: uuid('posting:credit'),
      kind: 'credit',
      companyId: CO,
      rail: 'RAIL_BREB',
      movementId: uuid('movement:credit'),
      entries: [
        { account: 'funding', amount: '-5000000000' },
        { account: wallet('BREB'), amount: '5000000000' },
      ],
      occurredAt: '2026-03-03T13:05:19.662Z',
      idempotencyKey: `admin-credit:${CO}:fondeo-2026-03-03`,
    },
  },
  'ledger.fee_charged': {
    summary: "The month's platform fee: 150,000 COP plus 28,500 COP IVA from the ACH wallet (FEE_CHARGE).",
    payload: {
      eventId: uuid('evt:ledger.fee_charged'),
      postingId: uuid('posting:fee-charge'),
      kind: 'fee_charge',
      companyId: CO,
      rail: 'RAIL_ACH',
      movementId: uuid('movement:fee-charge'),
      entries: [
        { account: wallet('ACH'), amount: '-17850000' },
        { account: 'fee_revenue:ACH_OUTFLOW', amount: '15000000' },
        { account: 'iva_payable', amount: '2850000' },
      ],
      occurredAt: '2026-03-31T22:00:07.015Z',
      idempotencyKey: `admin-fee:${CO}:mensualidad-2026-03`,
    },
  },
  'ledger.reserved': {
    summary: 'A Bre-B send of 1,250,000 COP reserved its amount, fee and IVA (125,178,500 centavos) on the BREB wallet.',
    payload: {
      eventId: uuid('evt:ledger.reserved'),
      postingId: uuid('posting:reserve-t1'),
      kind: 'reserve',
      companyId: CO,
      rail: 'RAIL_BREB',
      movementId: T1.movementId,
      holdId: T1.holdId,
      entries: [
        { account: wallet('BREB'), amount: `-${T1.reserved}` },
        { account: pendingOut('BREB'), amount: T1.reserved },
      ],
      occurredAt: '2026-03-10T15:20:41.204Z',
      idempotencyKey: `transfer:${T1.id}:reserve`,
    },
  },
  'ledger.committed': {
    summary: 'The Bre-B network confirmed the send: the hold went to the rail (amount), fee revenue and IVA.',
    payload: {
      eventId: uuid('evt:ledger.committed'),
      postingId: uuid('posting:commit-t1'),
      kind: 'commit',
      companyId: CO,
      rail: 'RAIL_BREB',
      movementId: T1.movementId,
      holdId: T1.holdId,
      entries: [
        { account: pendingOut('BREB'), amount: `-${T1.reserved}` },
        { account: 'rail_clearing:BREB', amount: T1.amount },
        { account: 'fee_revenue:BREB_OUTFLOW', amount: T1.fee },
        { account: 'iva_payable', amount: T1.iva },
      ],
      occurredAt: '2026-03-10T15:20:44.873Z',
      idempotencyKey: `transfer:${T1.id}:commit`,
    },
  },
  'ledger.released': {
    summary: 'The ACH rail refused a payroll send of 3,480,000 COP: its hold went back to the ACH wallet.',
    payload: {
      eventId: uuid('evt:ledger.released'),
      postingId: uuid('posting:release-t2'),
      kind: 'release',
      companyId: CO,
      rail: 'RAIL_ACH',
      movementId: uuid('movement:ach-nomina'),
      holdId: uuid('hold:ach-nomina'),
      entries: [
        { account: pendingOut('ACH'), amount: `-${T2.reserved}` },
        { account: wallet('ACH'), amount: T2.reserved },
      ],
      occurredAt: '2026-03-14T14:02:31.550Z',
      idempotencyKey: `transfer:${T2.id}:release`,
    },
  },
  'ledger.inflow_recorded': {
    summary: 'A PSE payment of 2,380,000 COP was credited to the ACH wallet, net of its fee (2,900 COP) and IVA.',
    payload: {
      eventId: uuid('evt:ledger.inflow_recorded'),
      postingId: uuid('posting:inflow-d1'),
      kind: 'inflow',
      companyId: CO,
      rail: 'RAIL_ACH',
      movementId: uuid('movement:inflow-d1'),
      entries: [
        { account: 'pse_settlement', amount: `-${D1.gross}` },
        { account: wallet('ACH'), amount: D1.net },
        { account: 'fee_revenue:PSE_INFLOW', amount: D1.fee },
        { account: 'iva_payable', amount: D1.iva },
      ],
      occurredAt: '2026-03-10T14:36:52.418Z',
      idempotencyKey: `deposit:${D1.id}:paid`,
    },
  },
  'ledger.inflow_reversed': {
    summary: "The PSE provider reversed that payment: the paid posting's entries, negated.",
    payload: {
      eventId: uuid('evt:ledger.inflow_reversed'),
      postingId: uuid('posting:reversal-d1'),
      kind: 'reversal',
      companyId: CO,
      rail: 'RAIL_ACH',
      movementId: uuid('movement:reversal-d1'),
      entries: [
        { account: 'pse_settlement', amount: D1.gross },
        { account: wallet('ACH'), amount: `-${D1.net}` },
        { account: 'fee_revenue:PSE_INFLOW', amount: `-${D1.fee}` },
        { account: 'iva_payable', amount: `-${D1.iva}` },
      ],
      occurredAt: '2026-03-18T16:12:09.007Z',
      idempotencyKey: `deposit:${D1.id}:reversed`,
    },
  },
  'ledger.correction_posted': {
    summary: 'An operator wrote off a 45,000 COP payout difference on the Bre-B rail (kind correction).',
    payload: {
      eventId: uuid('evt:ledger.correction_posted'),
      postingId: uuid('posting:correction'),
      kind: 'correction',
      companyId: CO,
      rail: 'RAIL_BREB',
      entries: [
        { account: 'operational_losses', amount: '-4500000' },
        { account: 'rail_clearing:BREB', amount: '4500000' },
      ],
      occurredAt: '2026-03-17T21:40:55.129Z',
      idempotencyKey: `exception:exc_${hex('exception:write-off', 32)}:correction`,
    },
  },
  'ledger.moved': {
    summary: 'A move of 20,000,000 COP from the ACH wallet to the BREB wallet (no fee); its public event is wallet.moved.',
    payload: {
      eventId: uuid('evt:ledger.moved'),
      postingId: uuid('move:ach-to-breb'),
      kind: 'move',
      companyId: CO,
      rail: 'RAIL_ACH',
      movementId: uuid('movement:move-out'),
      entries: [
        { account: wallet('ACH'), amount: '-2000000000' },
        { account: wallet('BREB'), amount: '2000000000' },
      ],
      occurredAt: '2026-03-16T13:30:00.861Z',
      idempotencyKey: `move:${CO}:fondeo-breb-2026-03-16`,
    },
  },
  'wallet.moved': {
    summary: 'The same move as a wallet event: 20,000,000 COP from ACH to BREB, both legs COMPLETED.',
    payload: {
      eventId: uuid('evt:wallet.moved'),
      companyId: CO,
      moveId: uuid('move:ach-to-breb'),
      fromRail: 'RAIL_ACH',
      toRail: 'RAIL_BREB',
      amountCents: '2000000000',
      reference: 'FONDEO-BREB-0316',
      description: 'Fondeo de la billetera Bre-B para pagos a proveedores',
      debitMovementId: uuid('movement:move-out'),
      creditMovementId: uuid('movement:move-in'),
      apiKeyId: API_KEY,
      occurredAt: '2026-03-16T13:30:00.861Z',
    },
  },
  'schedule.run_started': {
    summary: "Run 3 of a monthly schedule sent the warehouse rent (4,200,000 COP) to the landlord's Bre-B key.",
    payload: {
      eventId: uuid('evt:schedule.run_started'),
      run: runRef(3, '2026-03-05T14:00:00.000000Z', 'SEND'),
      transferId: uuid('transfer:arriendo-marzo'),
      amountCents: '420000000',
      status: 'PENDING',
      occurredAt: '2026-03-05T14:00:01.208413Z',
    },
  },
  'schedule.run_failed': {
    summary: 'Run 4 could not send the rent: the BREB wallet did not hold enough; nothing moved.',
    payload: {
      eventId: uuid('evt:schedule.run_failed'),
      run: runRef(4, '2026-04-05T14:00:00.000000Z', 'SEND', '2026-04-06T14:00:00.000000Z'),
      errorCode: 'INSUFFICIENT_BALANCE',
      errorMessage: 'Saldo insuficiente en la billetera BREB.',
      amountCents: '420000000',
      occurredAt: '2026-04-06T14:00:00.942117Z',
    },
  },
  'schedule.run_skipped': {
    summary: 'A top-up run had nothing to do: the BREB wallet already held its 30,000,000 COP target.',
    payload: {
      eventId: uuid('evt:schedule.run_skipped'),
      run: { ...runRef(12, '2026-03-16T12:00:00.000000Z', 'TOP_UP'), scheduleId: uuid('schedule:tope-breb'), runId: uuid('schedule-run:tope-12') },
      reason: 'La billetera BREB ya tiene 31.250.000,00 COP, por encima del objetivo de 30.000.000,00 COP.',
      occurredAt: '2026-03-16T12:00:00.377520Z',
    },
  },
  'wallet.balance_low': {
    summary: 'The BREB wallet fell below its 10,000,000 COP low threshold.',
    payload: {
      eventId: uuid('evt:wallet.balance_low'),
      companyId: CO,
      alertId: uuid('alert:low'),
      rail: 'RAIL_BREB',
      kind: 'BALANCE_ALERT_KIND_LOW',
      state: 'BALANCE_ALERT_STATE_LOW',
      availableCents: '874215000',
      thresholdCents: '1000000000',
      ...ALERT_SETTINGS,
      occurredAt: '2026-03-19T17:22:48.104392Z',
    },
  },
  'wallet.balance_recovered': {
    summary: 'The BREB wallet is back above 11,000,000 COP (low threshold plus the 1,000,000 COP hysteresis).',
    payload: {
      eventId: uuid('evt:wallet.balance_recovered'),
      companyId: CO,
      alertId: uuid('alert:recovered'),
      rail: 'RAIL_BREB',
      kind: 'BALANCE_ALERT_KIND_RECOVERED',
      state: 'BALANCE_ALERT_STATE_NORMAL',
      availableCents: '2874215000',
      thresholdCents: '1000000000',
      ...ALERT_SETTINGS,
      occurredAt: '2026-03-20T13:30:00.861071Z',
    },
  },
  'wallet.balance_high': {
    summary: 'The ACH wallet rose above its 500,000,000 COP high threshold.',
    payload: {
      eventId: uuid('evt:wallet.balance_high'),
      companyId: CO,
      alertId: uuid('alert:high'),
      rail: 'RAIL_ACH',
      kind: 'BALANCE_ALERT_KIND_HIGH',
      state: 'BALANCE_ALERT_STATE_HIGH',
      availableCents: '51237654900',
      thresholdCents: '50000000000',
      ...ALERT_SETTINGS,
      occurredAt: '2026-03-25T15:02:12.550019Z',
    },
  },
  'wallet.balance_normal': {
    summary: 'The ACH wallet is back under 499,000,000 COP (high threshold minus the hysteresis).',
    payload: {
      eventId: uuid('evt:wallet.balance_normal'),
      companyId: CO,
      alertId: uuid('alert:normal'),
      rail: 'RAIL_ACH',
      kind: 'BALANCE_ALERT_KIND_NORMAL',
      state: 'BALANCE_ALERT_STATE_NORMAL',
      availableCents: '41237654900',
      thresholdCents: '50000000000',
      ...ALERT_SETTINGS,
      occurredAt: '2026-03-26T14:10:40.300218Z',
    },
  },
  'transfer.created': {
    summary: "A Bre-B send of 1,250,000 COP to a supplier's phone key was accepted; its funds are reserved.",
    payload: {
      eventId: uuid('evt:transfer.created'),
      ...T1_BASE,
      status: 'MOVEMENT_STATUS_PENDING',
      occurredAt: '2026-03-10T15:20:41.204Z',
    },
  },
  'transfer.dispatched': {
    summary: 'The Bre-B network took the send (providerTransferId).',
    payload: {
      eventId: uuid('evt:transfer.dispatched'),
      ...T1_BASE,
      status: 'MOVEMENT_STATUS_EXECUTING',
      providerTransferId: 'BRB20260310152042PX81Q7',
      occurredAt: '2026-03-10T15:20:42.390Z',
    },
  },
  'transfer.completed': {
    summary: 'The Bre-B network confirmed the send: the supplier has the money.',
    payload: {
      eventId: uuid('evt:transfer.completed'),
      ...T1_BASE,
      status: 'MOVEMENT_STATUS_COMPLETED',
      providerTransferId: 'BRB20260310152042PX81Q7',
      completedAt: '2026-03-10T15:20:44.873Z',
      occurredAt: '2026-03-10T15:20:44.873Z',
    },
  },
  'transfer.failed': {
    summary: 'The ACH rail refused a payroll send of 3,480,000 COP; its funds were released.',
    payload: {
      eventId: uuid('evt:transfer.failed'),
      ...T2_BASE,
      status: 'MOVEMENT_STATUS_FAILED',
      providerTransferId: 'ACH-0313-004211',
      errorMessage: 'La red rechazó la transferencia.',
      occurredAt: '2026-03-14T14:02:31.550Z',
    },
  },
  'transfer.awaiting_approval': {
    summary: 'A Bre-B send of 68,000,000 COP needs two signatures (policy rule "big"); its funds are reserved.',
    payload: {
      eventId: uuid('evt:transfer.awaiting_approval'),
      ...T3_BASE,
      status: 'MOVEMENT_STATUS_AWAITING_APPROVAL',
      occurredAt: '2026-03-11T16:45:00.415Z',
    },
  },
  'transfer.approved': {
    summary: 'Two administrators signed it: the send goes on to the rail.',
    payload: {
      eventId: uuid('evt:transfer.approved'),
      ...T3_BASE,
      status: 'MOVEMENT_STATUS_EXECUTING',
      approvedBy: [ADMIN_1, ADMIN_2],
      occurredAt: '2026-03-11T18:02:37.009Z',
    },
  },
  'transfer.rejected': {
    summary: 'An administrator rejected the send; its funds were released.',
    payload: {
      eventId: uuid('evt:transfer.rejected'),
      ...T3_BASE,
      status: 'MOVEMENT_STATUS_FAILED',
      rejectedBy: ADMIN_2,
      errorMessage:
        'La transferencia fue rechazada en la aprobación con múltiples firmas; los fondos fueron liberados. Motivo: el anticipo se paga contra entrega',
      occurredAt: '2026-03-11T17:15:20.664Z',
    },
  },
  'transfer.expired': {
    summary: 'The send did not get its two signatures within 24 hours; its funds were released.',
    payload: {
      eventId: uuid('evt:transfer.expired'),
      ...T3_BASE,
      status: 'MOVEMENT_STATUS_EXPIRED',
      errorMessage: 'La aprobación expiró sin alcanzar las firmas requeridas; los fondos fueron liberados.',
      occurredAt: '2026-03-12T16:45:03.120Z',
    },
  },
  'transfer.batch_validated': {
    summary: 'A payroll batch of 120 lines was uploaded as CSV: 118 valid, 2 invalid; nothing moved yet.',
    payload: {
      eventId: uuid('evt:transfer.batch_validated'),
      companyId: CO,
      batch: {
        id: BATCH,
        state: 'VALIDATED',
        reference: 'NOMINA-2026-03-Q1',
        description: 'Nómina primera quincena marzo',
        mode: 'VALID_ONLY',
        source: 'CSV',
        itemCount: 120,
        validCount: 118,
        invalidCount: 2,
        totals: [
          { rail: 'RAIL_BREB', count: 71, amount: '16685000000', totalFee: '10650000', ivaAmount: '2023500', total: '16697673500' },
          { rail: 'RAIL_ACH', count: 47, amount: '14335000000', totalFee: '21150000', ivaAmount: '4018500', total: '14360168500' },
        ],
        byStatus: [
          { status: 'VALID', count: 118, amount: '31020000000' },
          { status: 'INVALID', count: 2, amount: '510000000' },
        ],
        finishedCount: 2,
        createdAt: '2026-03-13T12:40:18.229Z',
        expiresAt: '2026-03-14T12:40:18.229Z',
      },
      occurredAt: '2026-03-13T12:40:18.229Z',
    },
  },
  'transfer.batch_completed': {
    summary: 'Every executed line of the batch is final: 117 completed, 1 refused by the ACH rail.',
    payload: {
      eventId: uuid('evt:transfer.batch_completed'),
      companyId: CO,
      batch: {
        id: BATCH,
        state: 'PARTIALLY_FAILED',
        reference: 'NOMINA-2026-03-Q1',
        description: 'Nómina primera quincena marzo',
        mode: 'VALID_ONLY',
        source: 'CSV',
        itemCount: 120,
        validCount: 118,
        invalidCount: 2,
        totals: [
          { rail: 'RAIL_BREB', count: 71, amount: '16685000000', totalFee: '10650000', ivaAmount: '2023500', total: '16697673500' },
          { rail: 'RAIL_ACH', count: 47, amount: '14335000000', totalFee: '21150000', ivaAmount: '4018500', total: '14360168500' },
        ],
        byStatus: [
          { status: 'COMPLETED', count: 117, amount: '30672000000' },
          { status: 'FAILED', count: 1, amount: '348000000' },
          { status: 'INVALID', count: 2, amount: '510000000' },
        ],
        finishedCount: 120,
        createdAt: '2026-03-13T12:40:18.229Z',
        expiresAt: '2026-03-14T12:40:18.229Z',
        executedAt: '2026-03-13T13:00:04.871Z',
        completedAt: '2026-03-14T14:02:31.550Z',
      },
      occurredAt: '2026-03-14T14:02:31.550Z',
    },
  },
  'counterparty.verified': {
    summary: "The Bre-B directory named the holder given for the supplier's phone key.",
    payload: {
      eventId: uuid('evt:counterparty.verified'),
      companyId: CO,
      counterparty: {
        ...COUNTERPARTY,
        verification: { status: 'VERIFIED', method: 'DIRECTORY', requestedAt: '2026-03-09T20:11:09.340Z', decidedAt: '2026-03-09T20:11:10.012Z' },
        updatedAt: '2026-03-09T20:11:10.012Z',
        version: 2,
      },
      occurredAt: '2026-03-09T20:11:10.012Z',
    },
  },
  'counterparty.verification_failed': {
    summary: "The ACH rail rejected a new employee account's prenote (R03: no account).",
    payload: {
      eventId: uuid('evt:counterparty.verification_failed'),
      companyId: CO,
      counterparty: {
        id: rid('cpty_', 'counterparty:empleado-nuevo'),
        name: 'Juliana Ospina (nómina)',
        rail: 'ACH',
        bankAccount: { bankId: 1007, bankName: 'BANCOLOMBIA', accountTypeId: 20, accountNumberMasked: '***4417' },
        documentTypeId: 1,
        documentNumber: '1020456789',
        holderName: 'Juliana Ospina Cárdenas',
        tags: ['empleado'],
        verification: {
          status: 'FAILED',
          method: 'PRENOTE',
          reasonCode: 'R03',
          reason: 'La cuenta no existe o no corresponde al titular.',
          requestedAt: '2026-03-09T21:00:12.502Z',
          decidedAt: '2026-03-10T14:00:41.219Z',
        },
        createdAt: '2026-03-09T21:00:12.502Z',
        updatedAt: '2026-03-10T14:00:41.219Z',
        version: 2,
      },
      occurredAt: '2026-03-10T14:00:41.219Z',
    },
  },
  'deposit.created': {
    summary: 'A PSE payment link of 2,380,000 COP was created for a customer (PENDING_CONFIRM).',
    payload: { eventId: uuid('evt:deposit.created'), companyId: CO, deposit: { ...D1_BASE, status: 'PENDING_CONFIRM' }, occurredAt: D1.createdAt },
  },
  'deposit.paid': {
    summary: 'The customer paid by PSE: 2,376,549 COP net credited to the ACH wallet (ASSIGNED).',
    source: 'pse-deposit',
    payload: { eventId: uuid('evt:deposit.paid'), companyId: CO, deposit: D1_PAID, occurredAt: '2026-03-10T14:36:52.418Z' },
  },
  'deposit.failed': {
    summary: "The payer's bank declined a PSE payment of 560,000 COP.",
    payload: {
      eventId: uuid('evt:deposit.failed'),
      companyId: CO,
      deposit: {
        id: rid('dep_', 'deposit:pse-fallido'),
        status: 'FAILED',
        amountCents: '56000000',
        currency: 'COP',
        source: 'PSE',
        payerName: 'Andrés Felipe Gaitán',
        payerDocument: '1032456987',
        payerBank: 'BANCO DAVIVIENDA',
        payerEmail: 'afgaitan@correo.com.co',
        payerFirstName: 'Andrés Felipe',
        payerLastName: 'Gaitán',
        providerTransferId: 'PSE-3H8W1N6D',
        createdAt: '2026-03-11T01:12:40.118Z',
        internalRef: 'PED-55120',
        paygatewayUrl: 'https://checkout.pse-sandbox.example.co/pay/PSE-3H8W1N6D',
        expiresAt: '2026-03-11T02:12:40.118Z',
      },
      occurredAt: '2026-03-11T01:19:02.774Z',
    },
  },
  'deposit.expired': {
    summary: 'A PSE payment link of 1,250,000 COP was not paid within its hour.',
    payload: {
      eventId: uuid('evt:deposit.expired'),
      companyId: CO,
      deposit: {
        id: rid('dep_', 'deposit:pse-vencido'),
        status: 'EXPIRED',
        amountCents: '125000000',
        currency: 'COP',
        source: 'PSE',
        payerEmail: 'compras@supermercadoelvecino.co',
        createdAt: '2026-03-12T20:05:00.411Z',
        internalRef: 'FV-2026-001297',
        paygatewayUrl: 'https://checkout.pse-sandbox.example.co/pay/PSE-9K4C2V7B',
        expiresAt: '2026-03-12T21:05:00.411Z',
      },
      occurredAt: '2026-03-12T21:05:30.027Z',
    },
  },
  'deposit.reversed': {
    summary: 'The PSE provider reversed the 2,380,000 COP payment; its net was debited back from the ACH wallet.',
    source: 'pse-deposit',
    payload: { eventId: uuid('evt:deposit.reversed'), companyId: CO, deposit: { ...D1_PAID, status: 'REVERSED' }, occurredAt: '2026-03-18T16:12:09.007Z' },
  },
  'deposit.unassigned': {
    summary: 'A Bre-B payment of 350,000 COP reached a suspended collect key: received and held, not credited.',
    payload: {
      eventId: uuid('evt:deposit.unassigned'),
      companyId: CO,
      deposit: {
        id: rid('dep_', 'deposit:breb-sin-asignar'),
        status: 'UNASSIGNED',
        amountCents: '35000000',
        currency: 'COP',
        source: 'BREB',
        brebKey: { id: KEY.id, externalId: KEY.externalId, name: KEY.name, value: KEY.keyValue },
        payerName: 'Sandra Milena Rojas',
        payerDocument: '52789456',
        payerBank: 'NEQUI',
        providerTransferId: 'BRB20260321101544QZ3T90',
        providerConfirmedAt: '2026-03-21T15:15:44.000Z',
        createdAt: '2026-03-21T15:15:44.612Z',
      },
      occurredAt: '2026-03-21T15:15:44.612Z',
    },
  },
  'deposit.returned': {
    summary: 'A return of 200,000 COP (paid twice) reached the payer through Bre-B.',
    source: 'collect-key',
    payload: {
      eventId: uuid('evt:deposit.returned'),
      companyId: CO,
      depositReturn: {
        id: rid('ret_', 'return:duplicado'),
        depositId: D4,
        rail: 'BREB',
        amountCents: '20000000',
        reason: 'DUPLICATE',
        description: 'Pagó dos veces la cuota de marzo',
        status: 'RETURNED',
        transactionId: uuid('movement:return-duplicado'),
        createdAt: '2026-03-22T14:04:05.123Z',
        returnedAt: '2026-03-22T14:04:07.301Z',
        depositAmountCents: '180000000',
        returnedAmountCents: '20000000',
        payerName: 'Inversiones Santa Fe S.A.S.',
        payerDocument: '900765432',
        payerBank: 'BANCO DE OCCIDENTE',
      },
      occurredAt: '2026-03-22T14:04:07.301Z',
    },
  },
  'deposit.return_failed': {
    summary: 'A return of a PSE payment was refused by the provider (NOT_PAID); its hold was released, nothing moved.',
    source: 'pse-deposit',
    payload: {
      eventId: uuid('evt:deposit.return_failed'),
      companyId: CO,
      depositReturn: {
        id: rid('ret_', 'return:pse-rechazada'),
        depositId: rid('dep_', 'deposit:pse-cuota'),
        rail: 'PSE',
        amountCents: '89000000',
        reason: 'CUSTOMER_REQUEST',
        description: 'Retracto dentro de los cinco días hábiles',
        status: 'FAILED',
        failureCode: 'NOT_PAID',
        failureMessage: 'El proveedor PSE no reconoce el pago como pagado.',
        transactionId: uuid('movement:return-pse'),
        createdAt: '2026-03-23T19:20:11.871Z',
        depositAmountCents: '89000000',
        payerName: 'Camila Herrera Vélez',
        payerDocument: '1098765432',
        payerBank: 'BANCOLOMBIA',
      },
      occurredAt: '2026-03-23T19:20:13.002Z',
    },
  },
  'collectkey.created': {
    summary: 'A collect key was issued and registered at the Bre-B directory.',
    payload: { eventId: uuid('evt:collectkey.created'), companyId: CO, key: { ...KEY, state: 'ACTIVE' }, occurredAt: KEY.createdAt },
  },
  'collectkey.deleted': {
    summary: 'The key was deleted (unregistered from the directory).',
    payload: {
      eventId: uuid('evt:collectkey.deleted'),
      companyId: CO,
      key: { ...KEY, state: 'DELETED', deletedAt: '2026-03-28T22:00:01.330Z' },
      occurredAt: '2026-03-28T22:00:01.330Z',
    },
  },
  'collectkey.state_changed': {
    summary: 'An operator suspended the key.',
    payload: { eventId: uuid('evt:collectkey.state_changed'), companyId: CO, key: { ...KEY, state: 'SUSPENDED' }, occurredAt: '2026-03-20T16:45:09.871Z' },
  },
  'collectkey.qr_issued': {
    summary: 'A static QR was issued for the key (the payer types the amount).',
    payload: {
      eventId: uuid('evt:collectkey.qr_issued'),
      companyId: CO,
      key: { ...KEY, state: 'ACTIVE' },
      qr: {
        id: rid('qr_', 'qr:chapinero'),
        type: 'STATIC',
        reference: 'CAJA-CHAPINERO-1',
        createdAt: '2026-03-02T16:12:03.557Z',
        payload: emvQr({ dynamic: false, keyValue: KEY.keyValue, reference: 'CAJA-CHAPINERO-1' }),
        keyId: KEY.id,
      },
      occurredAt: '2026-03-02T16:12:03.557Z',
    },
  },
  'cobro.created': {
    summary: 'A cobro of 4,760,000 COP for invoice FV-2026-001284 was opened: its dynamic Bre-B key and QR are ready.',
    payload: {
      eventId: uuid('evt:cobro.created'),
      companyId: CO,
      cobro: { ...C1_BASE, status: 'OPEN', updatedAt: C1.createdAt },
      occurredAt: C1.createdAt,
    },
  },
  'cobro.partially_paid': {
    summary: 'A Bre-B payment of 2,000,000 COP (it read the QR) was matched; 2,760,000 COP are still due.',
    payload: {
      eventId: uuid('evt:cobro.partially_paid'),
      companyId: CO,
      cobro: { ...C1_BASE, status: 'PARTIALLY_PAID', paidAmountCents: '200000000', payments: [C1_PAY_1], updatedAt: C1_PAY_1.matchedAt },
      depositId: C1_PAY_1.depositId,
      occurredAt: C1_PAY_1.matchedAt,
    },
  },
  'cobro.paid': {
    summary: "A second payment of 2,760,000 COP to the cobro's key completed it.",
    payload: {
      eventId: uuid('evt:cobro.paid'),
      companyId: CO,
      cobro: {
        ...C1_BASE,
        status: 'PAID',
        paidAmountCents: '476000000',
        payments: [C1_PAY_1, C1_PAY_2],
        updatedAt: C1_PAY_2.matchedAt,
        paidAt: C1_PAY_2.matchedAt,
      },
      depositId: C1_PAY_2.depositId,
      occurredAt: C1_PAY_2.matchedAt,
    },
  },
  'cobro.expired': {
    summary: 'A cobro of 850,000 COP passed its expiry half paid; its key was deleted.',
    payload: {
      eventId: uuid('evt:cobro.expired'),
      companyId: CO,
      cobro: {
        id: C3.id,
        reference: 'FV-2026-001288',
        status: 'EXPIRED',
        amountType: 'FIXED',
        amountCents: '85000000',
        paidAmountCents: '42500000',
        currency: 'COP',
        description: 'Factura FV-2026-001288',
        metadata: {},
        overpaymentPolicy: 'ACCEPT',
        transactionId: C3.txid,
        breb: {
          keyId: rid('bkey_', 'cobro-key:fv-1288'),
          keyValue: C3.keyValue,
          qrPayload: emvQr({ dynamic: true, keyValue: C3.keyValue, amountCents: '85000000', transactionId: C3.txid, expiresAt: '2026-03-15T04:59:59.000Z' }),
        },
        payments: [
          {
            depositId: rid('dep_', 'deposit:cobro-1288-a'),
            source: 'BREB',
            amountCents: '42500000',
            netAmountCents: '42357200',
            matchedBy: 'REFERENCE',
            disposition: 'COUNTED',
            payerName: 'Droguería Salud Total Ltda.',
            payerDocument: '830045612',
            receivedAt: '2026-03-13T21:30:12.004Z',
            matchedAt: '2026-03-13T21:30:12.229Z',
          },
        ],
        expiresAt: '2026-03-15T04:59:59.000Z',
        createdAt: '2026-03-11T15:00:00.318Z',
        updatedAt: '2026-03-15T05:10:00.512Z',
        closedAt: '2026-03-15T05:10:00.512Z',
        methods: ['BREB_QR', 'BREB_KEY'],
        toleranceBelowCents: '425000',
        toleranceAboveCents: '425000',
      },
      occurredAt: '2026-03-15T05:10:00.512Z',
    },
  },
  'cobro.cancelled': {
    summary: 'The company cancelled an open-amount cobro (a fair stand) before anyone paid it; its key was deleted.',
    payload: {
      eventId: uuid('evt:cobro.cancelled'),
      companyId: CO,
      cobro: {
        id: C4.id,
        reference: 'FERIA-CORFERIAS-2026',
        status: 'CANCELLED',
        amountType: 'OPEN',
        currency: 'COP',
        description: 'Ventas stand 214, Feria Corferias',
        metadata: { stand: '214' },
        overpaymentPolicy: 'ACCEPT',
        transactionId: C4.txid,
        breb: {
          keyId: rid('bkey_', 'cobro-key:feria'),
          keyValue: C4.keyValue,
          qrPayload: emvQr({ dynamic: true, keyValue: C4.keyValue, transactionId: C4.txid, expiresAt: '2026-03-30T04:59:59.000Z' }),
        },
        expiresAt: '2026-03-30T04:59:59.000Z',
        createdAt: '2026-03-24T13:00:00.000Z',
        updatedAt: '2026-03-25T14:20:33.918Z',
        closedAt: '2026-03-25T14:20:33.918Z',
        methods: ['BREB_QR', 'BREB_KEY'],
      },
      occurredAt: '2026-03-25T14:20:33.918Z',
    },
  },
  'cobro.payment_reversed': {
    summary: 'The PSE provider reversed the payment of a 1,190,000 COP cobro: it no longer counts and the cobro is OPEN again.',
    payload: {
      eventId: uuid('evt:cobro.payment_reversed'),
      companyId: CO,
      cobro: {
        id: C2.id,
        reference: 'FV-2026-001301',
        status: 'OPEN',
        amountType: 'FIXED',
        amountCents: '119000000',
        currency: 'COP',
        description: 'Factura FV-2026-001301',
        expectedPayer: { document: '1015443322' },
        metadata: {},
        overpaymentPolicy: 'HOLD_FOR_REVIEW',
        transactionId: 'CB' + hex('txid:fv-1301', 20).toUpperCase(),
        pse: { depositId: C2.pseDeposit, paygatewayUrl: 'https://checkout.pse-sandbox.example.co/pay/PSE-6T1R8M2L' },
        payments: [
          {
            depositId: C2.pseDeposit,
            source: 'PSE',
            amountCents: '119000000',
            netAmountCents: '118654900',
            matchedBy: 'PSE_LINK',
            disposition: 'COUNTED',
            payerName: 'Julián Esteban Mora',
            payerDocument: '1015443322',
            receivedAt: '2026-03-17T23:41:09.000Z',
            matchedAt: '2026-03-17T23:41:09.553Z',
            reversedCents: '119000000',
          },
        ],
        expiresAt: '2026-03-31T04:59:59.000Z',
        createdAt: '2026-03-17T23:30:00.776Z',
        updatedAt: '2026-03-19T15:08:41.062Z',
        methods: ['PSE'],
        toleranceBelowCents: '595000',
        toleranceAboveCents: '595000',
      },
      depositId: C2.pseDeposit,
      occurredAt: '2026-03-19T15:08:41.062Z',
    },
  },
  'reconciliation.completed': {
    summary: 'The Bre-B run of 12 March 2026 reconciled: 1,412 report lines, one amount mismatch opened.',
    payload: {
      run: {
        id: RUN_ID,
        rail: 'breb',
        date: '2026-03-12',
        trigger: 'SCHEDULE',
        status: 'RECONCILED',
        startedAt: '2026-03-13T11:00:00.204Z',
        finishedAt: '2026-03-13T11:00:03.918Z',
        reportLines: '1412',
        reportAmountCents: '98455120000',
        oursCount: '1412',
        oursAmountCents: '98455220000',
        matchedCount: '1411',
        matchedAmountCents: '98390220000',
        breaksTotal: '1',
        breaksOpened: '1',
        breaksByKind: { amount_mismatch: '1' },
        requestedBy: 'scheduler',
        reportNetCents: '-98455120000',
        oursNetCents: '-98455220000',
      },
    },
  },
  'reconciliation.break': {
    summary: 'The Bre-B report shows 100 COP less than our books for one send (amount_mismatch); its money exception was opened.',
    payload: {
      break: {
        key: 'breb:2026-03-12:amount_mismatch:BRB20260312174455KD72A1',
        kind: 'amount_mismatch',
        rail: 'breb',
        date: '2026-03-12',
        ourId: uuid('transfer:breb-descuadre'),
        providerId: 'BRB20260312174455KD72A1',
        oursJson: '{"amountCents":"65000000","status":"COMPLETED"}',
        theirsJson: '{"amountCents":"64990000","status":"SETTLED"}',
        status: 'OPEN',
        runId: RUN_ID,
        lastSeenRunId: RUN_ID,
        openedAt: '2026-03-13T11:00:03.711Z',
        exceptionId: `exc_${hex('exception:descuadre', 32)}`,
        differenceCents: '10000',
        movement: `breb:our:${uuid('transfer:breb-descuadre')}`,
      },
    },
  },
  'company.security_changed': {
    summary: 'An administrator revoked an API key from the dashboard.',
    payload: {
      eventId: uuid('evt:company.security_changed'),
      companyId: CO,
      change: 'API_KEY_REVOKED',
      summary: 'Se revocó la clave de API wk_live_Q7x2… (ERP pruebas, escritura); deja de funcionar de inmediato.',
      actorKind: 'dashboard-user',
      actorId: uuid('user:tesoreria'),
      detailsJson: JSON.stringify({
        keyId: uuid('api-key:erp-pruebas'),
        prefix: 'wk_live_Q7x2',
        label: 'ERP pruebas',
        scope: 'WRITE',
        revokedAt: '2026-03-09T19:44:12.071Z',
      }),
      occurredAt: '2026-03-09T19:44:12.083Z',
    },
  },
  'company.policy_changed': {
    summary: 'Version 3 of the approval policy reached its two ADMIN signatures; it decides payments from effectiveAt.',
    payload: {
      eventId: uuid('evt:company.policy_changed'),
      companyId: CO,
      policyId: rid('apol_', 'policy:v3'),
      version: 3,
      documentJson: JSON.stringify({
        rules: [
          {
            id: 'big',
            description: 'Dos firmas desde 50 millones',
            when: { amountAtLeastCents: 5000000000 },
            then: { action: 'REQUIRE_APPROVALS', approvals: 2 },
          },
          {
            id: 'proveedores',
            description: 'Proveedores verificados sin firmas',
            when: { counterpartyTags: ['proveedor'], counterpartyVerified: true },
            then: { action: 'ALLOW' },
          },
        ],
        otherwise: { action: 'REQUIRE_APPROVALS', approvals: 2 },
      }),
      effectiveAt: '2026-03-09T14:00:00.000Z',
      signedBy: [ADMIN_1, ADMIN_2],
      previousVersion: 2,
      occurredAt: '2026-03-08T14:00:00.000Z',
    },
  },
};

/** Where the examples' headers come from: the publisher, and the trace when tracing is on. */
export function exampleHeaders(subject, publisher, payload) {
  const id = payload.eventId ?? uuid(`evt:${subject}`);
  const time = payload.occurredAt ?? payload.run?.finishedAt ?? payload.break?.openedAt;
  return {
    'ce-id': id,
    'ce-type': subject,
    'ce-source': publisher,
    'ce-time': new Date(time).toISOString(),
    'ce-specversion': '1.0',
    'content-type': 'application/json',
    traceparent: `00-${hex(`trace:${subject}`, 32)}-${hex(`span:${subject}`, 16)}-01`,
    'Nats-Msg-Id': id,
  };
}
