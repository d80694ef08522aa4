import { PNG } from 'pngjs';
import jsQRModule from 'jsqr';

// jsqr is CommonJS: under ESM interop the default import is the function itself or carries it as `default`.
type Decode = (data: Uint8ClampedArray, width: number, height: number) => { data: string } | null;
const jsQR = ((jsQRModule as unknown as { default?: Decode }).default ?? jsQRModule) as unknown as Decode;

/** The text a QR image (PNG bytes) holds, read by an independent decoder (jsqr); null when none is found. */
export function decodeQrPng(png: Buffer): string | null {
  const img = PNG.sync.read(png);
  return jsQR(new Uint8ClampedArray(img.data), img.width, img.height)?.data ?? null;
}

/** CRC16-CCITT (0x1021, init 0xFFFF), as EMVCo QR payloads carry in tag 63. */
export function crc16(s: string): string {
  let crc = 0xffff;
  for (const byte of Buffer.from(s, 'utf8')) {
    crc ^= byte << 8;
    for (let i = 0; i < 8; i++) crc = crc & 0x8000 ? ((crc << 1) ^ 0x1021) & 0xffff : (crc << 1) & 0xffff;
  }
  return crc.toString(16).toUpperCase().padStart(4, '0');
}
