// A tiny element builder. Text only ever goes in through text nodes (never innerHTML), so
// whatever the API returns (names, references, messages) cannot become markup.

type Attrs = Record<string, string | boolean | undefined>;
type Child = Node | string | null | undefined | false;

export function h<K extends keyof HTMLElementTagNameMap>(tag: K, attrs: Attrs = {}, ...children: Child[]): HTMLElementTagNameMap[K] {
  const el = document.createElement(tag);
  for (const [name, value] of Object.entries(attrs)) {
    if (value === undefined || value === false) continue;
    el.setAttribute(name, value === true ? '' : value);
  }
  for (const c of children) if (c !== null && c !== undefined && c !== false) el.append(typeof c === 'string' ? document.createTextNode(c) : c);
  return el;
}

/** The element with this id, typed; a missing one is a bug in index.html. */
export function byId<T extends HTMLElement>(id: string): T {
  const el = document.getElementById(id);
  if (!el) throw new Error(`#${id} missing from the page`);
  return el as T;
}

/** Shows a message in a status/alert element (or hides it when the text is empty). */
export function setMessage(el: HTMLElement, text: string, kind: 'info' | 'success' | 'error' = 'info'): void {
  el.textContent = text;
  el.hidden = text === '';
  el.classList.remove('msg-info', 'msg-success', 'msg-error');
  el.classList.add(`msg-${kind}`);
}

/** A term and its value in a `<dl>` (the value marked for tests when `testId` is given). */
export function detail(term: string, value: string, testId?: string): HTMLElement[] {
  return [h('dt', {}, term), h('dd', testId ? { 'data-testid': testId } : {}, value)];
}
