import { PDFParse } from 'pdf-parse';

/** The text and page count of a PDF (a receipt, a statement), read with pdf-parse: what a reader sees, not our own parser. */
export async function pdfText(buf: ArrayBuffer): Promise<{ text: string; pages: number }> {
  const parser = new PDFParse({ data: Buffer.from(buf) });
  try {
    const r = await parser.getText();
    return { text: r.text, pages: r.total };
  } finally {
    await parser.destroy();
  }
}
