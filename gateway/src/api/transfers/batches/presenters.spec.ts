import { ledgerV1, type transferV1 } from '@wallet/proto';
import { BatchCreatedSchema, BatchItemSchema, BatchSchema } from './schemas.js';
import { batchCreatedToApi, batchItemToApi, batchToApi } from './presenters.js';
import { batchResultRow, BATCH_RESULTS_COLUMNS } from './batch-results.js';

const batch: transferV1.Batch = {
  id: '0b7d4c1e-8f1a-4a57-9a43-2f0c3b9d1e11',
  state: 'EXECUTING',
  reference: 'nómina-noviembre',
  mode: 'VALID_ONLY',
  source: 'CSV',
  itemCount: 3,
  validCount: 2,
  invalidCount: 1,
  totals: [{ rail: ledgerV1.Rail.BREB, count: 2, amount: 30_000n, totalFee: 1_000n, ivaAmount: 190n, total: 31_190n }],
  byStatus: [
    { status: 'COMPLETED', count: 1, amount: 10_000n },
    { status: 'PENDING', count: 1, amount: 20_000n },
    { status: 'NOT_EXECUTED', count: 1, amount: 0n },
  ],
  finishedCount: 2,
  createdAt: new Date('2026-11-21T15:00:00Z'),
  expiresAt: new Date('2026-11-22T15:00:00Z'),
  executedAt: new Date('2026-11-21T15:05:00Z'),
  threshold: 0,
};

describe('batch presenters', () => {
  it('Batch: centavos as JSON integers, lower-case mode and source, progress as a floored percent, nulls for what is missing', () => {
    const out = batchToApi(batch);
    expect(out).toEqual({
      id: batch.id,
      status: 'EXECUTING',
      reference: 'nómina-noviembre',
      description: null,
      mode: 'valid_only',
      source: 'csv',
      itemCount: 3,
      validCount: 2,
      invalidCount: 1,
      totals: [{ rail: 'BREB', count: 2, amount: 30_000, totalFee: 1_000, ivaAmount: 190, total: 31_190 }],
      byStatus: [
        { status: 'COMPLETED', count: 1, amount: 10_000 },
        { status: 'PENDING', count: 1, amount: 20_000 },
        { status: 'NOT_EXECUTED', count: 1, amount: 0 },
      ],
      progress: { finished: 2, total: 3, percent: 66 },
      createdAt: '2026-11-21T15:00:00.000000Z',
      expiresAt: '2026-11-22T15:00:00.000000Z',
      executedAt: '2026-11-21T15:05:00.000000Z',
      completedAt: null,
      cancelledAt: null,
      approvalId: null,
      threshold: 0,
      approval: null,
      errorMessage: null,
    });
    expect(BatchSchema.parse(out)).toEqual(out);
    expect(batchToApi({ ...batch, itemCount: 0, finishedCount: 0 }).progress).toEqual({ finished: 0, total: 0, percent: 0 });
  });

  it('Batch of a multi-signature company: its one approval, signatures in order, nulls until decided', () => {
    const approval: transferV1.BatchApproval = {
      approvalId: 'appr_0123456789abcdef0123456789abcdef',
      threshold: 2,
      status: 'REJECTED',
      signatures: [{ userId: 'u1', email: 'ana@empresa.co', role: 'OPERATOR', signedAt: new Date('2026-11-21T15:06:00Z') }],
      createdAt: new Date('2026-11-21T15:05:00Z'),
      expiresAt: new Date('2026-11-22T15:05:00Z'),
      decidedAt: new Date('2026-11-21T15:07:00Z'),
      rejectReason: 'Lote duplicado',
      rejectedBy: 'luis@empresa.co',
    };
    const out = batchToApi({ ...batch, state: 'FAILED', threshold: 2, approvalId: approval.approvalId, approval });
    expect(out).toMatchObject({ threshold: 2, approvalId: approval.approvalId });
    expect(out.approval).toEqual({
      approvalId: approval.approvalId,
      threshold: 2,
      status: 'REJECTED',
      signatures: [{ userId: 'u1', email: 'ana@empresa.co', role: 'OPERATOR', signedAt: '2026-11-21T15:06:00.000000Z' }],
      createdAt: '2026-11-21T15:05:00.000000Z',
      expiresAt: '2026-11-22T15:05:00.000000Z',
      decidedAt: '2026-11-21T15:07:00.000000Z',
      rejectReason: 'Lote duplicado',
      rejectedBy: 'luis@empresa.co',
    });
    expect(BatchSchema.parse(out)).toEqual(out);
    const pending = batchToApi({
      ...batch,
      approval: { ...approval, status: 'PENDING', signatures: [], decidedAt: undefined, rejectReason: undefined, rejectedBy: undefined },
    });
    expect(pending.approval).toMatchObject({ status: 'PENDING', signatures: [], decidedAt: null, rejectReason: null, rejectedBy: null });
    expect(BatchSchema.parse(pending)).toEqual(pending);
  });

  it('created batch: one result per item, line null for JSON, error and message only on invalid items', () => {
    const out = batchCreatedToApi({
      batch: { ...batch, state: 'VALIDATED', source: 'JSON', mode: 'ALL' },
      replayed: false,
      idempotencyKeyReplayed: false,
      results: [
        { seq: 1, line: 0, valid: true },
        { seq: 2, line: 0, valid: false, errorCode: 'KEY_NOT_FOUND', message: 'La llave no existe.' },
      ],
    });
    expect(out.results).toEqual([
      { item: 1, line: null, valid: true },
      { item: 2, line: null, valid: false, error: 'KEY_NOT_FOUND', message: 'La llave no existe.' },
    ]);
    expect(out).toMatchObject({ status: 'VALIDATED', source: 'json', mode: 'all' });
    expect(BatchCreatedSchema.parse(out)).toEqual(out);
  });

  const item: transferV1.BatchItem = {
    seq: 7,
    line: 9,
    status: 'COMPLETED',
    rail: ledgerV1.Rail.ACH,
    amount: 15_000_050n,
    totalFee: 500n,
    ivaAmount: 95n,
    targetName: '=HYPERLINK("x")',
    targetDocument: '1012345678',
    reference: 'r-7',
    destination: 'Bancolombia Ahorros ****6789',
    transferId: 'tr_1',
    completedAt: new Date('2026-11-21T15:00:00Z'),
  };

  it('BatchItem: rail null when unspecified, line null for JSON, ids and errors as given', () => {
    const out = batchItemToApi(item);
    expect(out).toEqual({
      item: 7,
      line: 9,
      status: 'COMPLETED',
      rail: 'ACH',
      amount: 15_000_050,
      totalFee: 500,
      ivaAmount: 95,
      targetName: '=HYPERLINK("x")',
      targetDocument: '1012345678',
      reference: 'r-7',
      description: null,
      destination: 'Bancolombia Ahorros ****6789',
      transactionId: 'tr_1',
      error: null,
      message: null,
      completedAt: '2026-11-21T15:00:00.000000Z',
    });
    expect(BatchItemSchema.parse(out)).toEqual(out);
    const invalid = batchItemToApi({
      ...item,
      line: 0,
      status: 'INVALID',
      rail: ledgerV1.Rail.UNSPECIFIED,
      amount: 0n,
      transferId: undefined,
      completedAt: undefined,
      errorCode: 'INVALID_REQUEST',
      message: 'amount: …',
    });
    expect(invalid).toMatchObject({ line: null, rail: null, transactionId: null, completedAt: null, error: 'INVALID_REQUEST', message: 'amount: …' });
  });

  it('results.csv row: pesos with a decimal comma, Bogotá time, formula-injection guard, quoted cells', () => {
    expect(BATCH_RESULTS_COLUMNS.join(';')).toBe(
      'item;linea;estado;riel;monto;comision;iva;beneficiario;documento;referencia;destino;transaccion;error;mensaje;completada',
    );
    expect(batchResultRow(item)).toBe(
      '"7";"9";"COMPLETED";"ACH";"150000,50";"5,00";"0,95";"\'=HYPERLINK(""x"")";"1012345678";"r-7";"Bancolombia Ahorros ****6789";"tr_1";"";"";"2026-11-21 10:00:00"\r\n',
    );
    expect(batchResultRow({ ...item, line: 0, rail: ledgerV1.Rail.UNSPECIFIED, completedAt: undefined })).toMatch(/^"7";"";"COMPLETED";"";.*;""\r\n$/);
  });
});
