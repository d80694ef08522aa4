// «Contrapartes» (docs/counterparties.md): the company's payees with their verification, read only
// (they are created and changed through the API).
import { api, ApiError, type Counterparty } from './api.js';
import { byId, h, setMessage } from './dom.js';
import { label, RAIL_LABEL } from './format.js';

export interface CounterpartiesDeps {
  token(): string | undefined;
  /** Any 401: back to the login form (true when that happened). */
  sessionLost(err: unknown): boolean;
}

const VERIFICATION_LABEL: Record<string, string> = { UNVERIFIED: 'Sin verificar', PENDING: 'Verificando', VERIFIED: 'Verificada', FAILED: 'Falló' };

const destinationOf = (c: Counterparty) =>
  c.brebKey ? `${c.brebKey.keyType} ${c.brebKey.keyValue}` : c.bankAccount ? `${c.bankAccount.bankName} ${c.bankAccount.accountNumberMasked}` : '—';

function row(c: Counterparty): HTMLElement {
  return h(
    'tr',
    { 'data-testid': 'counterparty-row', 'data-id': c.id },
    h('td', {}, c.name),
    h('td', {}, label(RAIL_LABEL, c.rail)),
    h('td', {}, destinationOf(c)),
    h('td', {}, `${c.holderName} · ${c.documentNumber}`),
    h('td', {}, c.tags.join(', ') || '—'),
    h(
      'td',
      {},
      h('span', { class: 'badge', 'data-testid': 'counterparty-status' }, label(VERIFICATION_LABEL, c.verification.status)),
      c.verification.reason ? h('span', { class: 'muted small' }, ` ${c.verification.reason}`) : null,
    ),
  );
}

export function counterpartiesPanel(deps: CounterpartiesDeps) {
  const ui = {
    view: byId('counterparties-view'),
    list: byId<HTMLTableSectionElement>('counterparty-list'),
    message: byId('counterparty-message'),
    more: byId<HTMLButtonElement>('counterparty-more'),
  };
  let generation = 0;

  async function load(cursor?: string): Promise<void> {
    const token = deps.token();
    if (!token) return;
    const mine = cursor ? generation : ++generation;
    if (!cursor) setMessage(ui.message, 'Cargando contrapartes…');
    try {
      const page = await api.counterparties(token, cursor);
      if (mine !== generation) return;
      if (cursor) ui.list.append(...page.items.map(row));
      else ui.list.replaceChildren(...page.items.map(row));
      ui.more.hidden = !page.nextCursor;
      ui.more.onclick = page.nextCursor ? () => void load(page.nextCursor!) : null;
      if (!cursor) setMessage(ui.message, page.items.length === 0 ? 'Aún no hay contrapartes.' : '');
    } catch (err) {
      if (mine !== generation || deps.sessionLost(err)) return;
      setMessage(ui.message, err instanceof ApiError ? err.message : 'No se pudieron cargar las contrapartes.', 'error');
    }
  }

  return {
    show(): void {
      ui.view.hidden = false;
      void load();
    },
    hide(): void {
      ui.view.hidden = true;
    },
    reset(): void {
      generation++;
      ui.view.hidden = true;
      ui.list.replaceChildren();
      ui.more.hidden = true;
      setMessage(ui.message, '');
    },
  };
}
