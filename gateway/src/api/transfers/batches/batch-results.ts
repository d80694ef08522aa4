import { Readable } from 'node:stream';
import type { CallContext } from '@wallet/platform';
import type { transferV1 } from '@wallet/proto';
import { railOrNull } from './presenters.js';
import type { TransferClient } from '../../../clients/transfer-client.js';
import { bogotaCell, CSV_BOM, csvRow, pesos } from '../../csv-cells.js';

/** The columns of a batch's results.csv (docs/batches.md). */
export const BATCH_RESULTS_COLUMNS = [
  'item',
  'linea',
  'estado',
  'riel',
  'monto',
  'comision',
  'iva',
  'beneficiario',
  'documento',
  'referencia',
  'destino',
  'transaccion',
  'error',
  'mensaje',
  'completada',
] as const;

export function batchResultRow(i: transferV1.BatchItem): string {
  return csvRow([
    String(i.seq),
    i.line > 0 ? String(i.line) : '',
    i.status,
    railOrNull(i.rail) ?? '',
    pesos(i.amount),
    pesos(i.totalFee),
    pesos(i.ivaAmount),
    i.targetName,
    i.targetDocument,
    i.reference ?? '',
    i.destination,
    i.transferId ?? '',
    i.errorCode ?? '',
    i.message ?? '',
    i.completedAt ? bogotaCell(i.completedAt) : '',
  ]);
}

/**
 * A batch's items as a CSV download, streamed page by page from StreamBatchItems (up to 1,000 items
 * a page; never the whole file in memory). The first page is read before it returns, so an unknown
 * batch is still an HTTP error (404) rather than a broken download.
 */
export async function batchResultsCsv(transfers: TransferClient, batchId: string, call: CallContext): Promise<Readable> {
  const it = transfers.streamBatchItems({ batchId }, call)[Symbol.asyncIterator]();
  const first = await it.next();
  async function* chunks(): AsyncGenerator<string> {
    yield CSV_BOM + csvRow(BATCH_RESULTS_COLUMNS);
    let next = first;
    try {
      while (!next.done) {
        let chunk = '';
        for (const i of next.value.items) chunk += batchResultRow(i);
        if (chunk) yield chunk;
        next = await it.next();
      }
    } finally {
      // the download stopped early (client gone, error): cancel the service's stream
      if (!next.done) await it.return?.();
    }
  }
  return Readable.from(chunks(), { objectMode: false });
}
