import { spawnSync } from 'node:child_process';
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';

/**
 * Tests' access to poppler's `pdfsig`, the independent verifier of the receipts' PAdES signatures
 * (Debian package poppler-utils; `test/scripts/setup.mjs pdfsig` installs it for `npm test`).
 * Where it is missing, the tests that need it are skipped with `PDFSIG_MISSING` on stderr.
 */

export const PDFSIG_AVAILABLE: boolean = (() => {
  const r = spawnSync('pdfsig', ['-v'], { encoding: 'utf8' });
  return !r.error && r.status === 0;
})();

export const PDFSIG_MISSING =
  '\n***** pdfsig NOT FOUND: the receipt signature checks with pdfsig are SKIPPED. *****\n' +
  "Install Debian's package poppler-utils (`node test/scripts/setup.mjs pdfsig` does it as root).\n\n";

/** One signature as pdfsig reports it (its own wording, e.g. validation "Signature is Valid." / "Digest Mismatch."). */
export interface PdfsigSignature {
  fieldName: string;
  commonName: string;
  distinguishedName: string;
  signingTime: string;
  hashAlgorithm: string;
  /** The /SubFilter, e.g. ETSI.CAdES.detached. */
  type: string;
  ranges: string;
  totalDocumentSigned: boolean;
  validation: string;
  certificateValidation: string | undefined;
}

export interface PdfsigReport {
  exitCode: number | null;
  output: string;
  signatures: PdfsigSignature[];
}

/** Runs `pdfsig -no-ocsp` on a PDF (never any network: no OCSP, no AIA fetching) and parses its report. */
export function pdfsig(pdf: Uint8Array): PdfsigReport {
  const dir = mkdtempSync(join(tmpdir(), 'pdfsig-'));
  try {
    const file = join(dir, 'receipt.pdf');
    writeFileSync(file, pdf);
    const r = spawnSync('pdfsig', ['-no-ocsp', file], { encoding: 'utf8', timeout: 30_000 });
    if (r.error) throw r.error;
    const output = `${r.stdout}${r.stderr}`;
    const signatures = r.stdout
      .split(/^Signature #\d+:$/m)
      .slice(1)
      .map((block) => {
        const field = (label: string) => new RegExp(`^\\s*- ${label}: (.*)$`, 'm').exec(block)?.[1]?.trim();
        return {
          fieldName: field('Signature Field Name') ?? '',
          commonName: field('Signer Certificate Common Name') ?? '',
          distinguishedName: field('Signer full Distinguished Name') ?? '',
          signingTime: field('Signing Time') ?? '',
          hashAlgorithm: field('Signing Hash Algorithm') ?? '',
          type: field('Signature Type') ?? '',
          ranges: field('Signed Ranges') ?? '',
          totalDocumentSigned: /^\s*- Total document signed$/m.test(block),
          validation: field('Signature Validation') ?? '',
          certificateValidation: field('Certificate Validation'),
        };
      });
    return { exitCode: r.status, output, signatures };
  } finally {
    rmSync(dir, { recursive: true, force: true });
  }
}

/** The /ByteRange of a signed PDF's (last) signature: [start, length, start, length]. */
export function signedByteRange(pdf: Uint8Array): [number, number, number, number] {
  const text = Buffer.from(pdf).toString('latin1');
  const all = [...text.matchAll(/\/ByteRange\s*\[\s*(\d+)\s+(\d+)\s+(\d+)\s+(\d+)\s*\]/g)];
  const last = all.at(-1);
  if (!last) throw new Error('no /ByteRange: the PDF is not signed');
  return [Number(last[1]), Number(last[2]), Number(last[3]), Number(last[4])];
}

/**
 * A copy of a signed PDF with one byte changed inside the signed range, not in /Contents (the
 * signature's hex): a byte of the page's first content stream, as any edit of the receipt's text or
 * drawing would change. The file keeps its length and structure, so a verifier still reads it.
 */
export function tamperSignedPdf(pdf: Uint8Array): Buffer {
  const out = Buffer.from(pdf);
  const [, contentsAt] = signedByteRange(out);
  const stream = out.indexOf('stream\n');
  const at = stream + 'stream\n'.length + 16;
  if (stream < 0 || at >= contentsAt) throw new Error('no content stream before the signature');
  out[at] = out[at]! ^ 0x01;
  return out;
}
