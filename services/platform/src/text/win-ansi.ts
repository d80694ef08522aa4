// WinAnsi (cp1252) beyond Latin-1: what the standard PDF fonts (Helvetica…) can draw.
const CP1252_EXTRA = new Set('€‚ƒ„…†‡ˆ‰Š‹ŒŽ‘’“”•–—˜™š›œžŸ');

/**
 * Text the standard PDF fonts can draw (pdfkit's built-in Helvetica encodes WinAnsi): cp1252 kept,
 * control characters as spaces, other letters stripped of their diacritics, anything else '?'.
 * Shared by the PDF receipts (receipt service) and statements (gateway).
 */
export function winAnsi(text: string): string {
  let out = '';
  for (const ch of text.replace(/[\u0000-\u001f\u007f-\u009f]/g, ' ')) {
    const c = ch.codePointAt(0)!;
    if ((c >= 0x20 && c <= 0x7e) || (c >= 0xa0 && c <= 0xff) || CP1252_EXTRA.has(ch)) {
      out += ch;
      continue;
    }
    if (c === 0x2212) {
      out += '-';
      continue;
    }
    const base = ch.normalize('NFD').replace(/[\u0300-\u036f]/g, '');
    out +=
      [...base].every((b) => {
        const x = b.codePointAt(0)!;
        return x >= 0x20 && x <= 0x7e;
      }) && base.length > 0
        ? base
        : '?';
  }
  return out;
}
