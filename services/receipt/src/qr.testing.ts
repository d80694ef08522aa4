import { spawnSync } from 'node:child_process';
import { mkdtempSync, readdirSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import jsQRModule from 'jsqr';
import { PNG } from 'pngjs';

/**
 * Tests' reading of a receipt's QR: its images extracted with poppler's `pdfimages` (Debian package
 * poppler-utils, beside pdfsig) and decoded with jsQR, an independent decoder.
 */

export const PDFIMAGES_AVAILABLE: boolean = (() => {
  const r = spawnSync('pdfimages', ['-v'], { encoding: 'utf8' });
  return !r.error && r.status === 0;
})();

// jsqr is CommonJS: under ESM interop the default import is the function itself or carries it as `default`.
type Decode = (data: Uint8ClampedArray, width: number, height: number) => { data: string } | null;
const jsQR = ((jsQRModule as unknown as { default?: Decode }).default ?? jsQRModule) as unknown as Decode;

/** The QR codes of a PDF's images, decoded. */
export function receiptQrCodes(pdf: Buffer): string[] {
  const dir = mkdtempSync(join(tmpdir(), 'receipt-qr-'));
  try {
    writeFileSync(join(dir, 'r.pdf'), pdf);
    const r = spawnSync('pdfimages', ['-png', join(dir, 'r.pdf'), join(dir, 'img')], { encoding: 'utf8' });
    if (r.status !== 0) throw new Error(`pdfimages: ${r.stderr}`);
    return readdirSync(dir)
      .filter((f) => f.endsWith('.png'))
      .map((f) => PNG.sync.read(readFileSync(join(dir, f))))
      .map((png) => jsQR(new Uint8ClampedArray(png.data), png.width, png.height)?.data)
      .filter((d): d is string => d !== undefined);
  } finally {
    rmSync(dir, { recursive: true, force: true });
  }
}
