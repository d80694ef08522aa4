import { randomUUID } from 'node:crypto';
import { ledgerUseCases } from './dist/app/use-cases.js';
import { postingStatement } from './dist/persistence/posting-statement.js';
import { ledgerHandlers } from './dist/grpc/ledger.handlers.js';
import { ledgerV1 } from '@wallet/proto';
const store = { async recordPosting(w) { const s = postingStatement(w); let i = 0; s.sql.replace(/\?/g, () => `$${++i}`); return { status: 'applied', movement: null, hold: { id: w.newHold.id, companyId: 'x', rail: 'BREB', status: 'OPEN', amount: 1n, fee: 0n, iva: 0n, total: 1n, movementId: 'm', createdAt: new Date(), closedAt: null } }; } };
const uc = ledgerUseCases({ store, events: { nudge() {} }, now: () => new Date(), newId: randomUUID, traceparent: () => undefined });
const h = ledgerHandlers(uc);
const fee = { fixedFee: 0n, variableFee: 0n, subtotalFee: 0n, ivaApplicable: false, ivaAmount: 0n, totalCharged: 0n };
const ctx = { requestId: 'x', companyId: randomUUID() };
const mk = () => ledgerV1.ReserveRequest.fromPartial({ idempotencyKey: `bench-hold-${randomUUID()}`, rail: ledgerV1.Rail.BREB, amount: 100n, fee, movement: { id: randomUUID(), status: ledgerV1.MovementStatus.PENDING, details: {} } });
for (let i = 0; i < 5000; i++) await h.reserve(mk(), ctx);
let t = performance.now(); const N = 20000;
for (let i = 0; i < N; i++) await h.reserve(mk(), ctx);
console.log('handler+usecase+statement build µs/op', ((performance.now() - t) / N * 1000).toFixed(1));
t = performance.now();
for (let i = 0; i < N; i++) { const r = mk(); ledgerV1.ReserveRequest.decode(ledgerV1.ReserveRequest.encode(r).finish()); }
console.log('proto encode+decode req µs/op', ((performance.now() - t) / N * 1000).toFixed(1));
