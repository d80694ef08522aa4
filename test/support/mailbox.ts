/**
 * The first match of `re` in the mails the sandbox's SMTP sink received for `to`: how a test receives
 * what production delivers only to its owner (an enrolment token, an invitation link, an API key). The
 * gateway sends right after the transaction that wrote the mail commits; this waits for it.
 */
export async function mailed(sandboxUrl: string, to: string, re: RegExp, timeoutMs = 20_000): Promise<RegExpExecArray> {
  const deadline = Date.now() + timeoutMs;
  for (;;) {
    const items = ((await (await fetch(`${sandboxUrl}/sandbox/emails?to=${encodeURIComponent(to)}`)).json()) as { items: Array<{ text: string }> }).items;
    for (const m of items) {
      const hit = re.exec(m.text);
      if (hit) return hit;
    }
    if (Date.now() > deadline) throw new Error(`no mail to ${to} matching ${re}`);
    await new Promise((res) => setTimeout(res, 100));
  }
}
