// «Alertas de saldo» (docs/balance-alerts.md): both wallets' low/high thresholds and the state they
// are in, and every crossing, read only (the thresholds are set through the API).
import { api, ApiError, type BalanceAlert, type BalanceAlertEvent } from './api.js';
import { byId, h, setMessage } from './dom.js';
import { ALERT_KIND_LABEL, ALERT_STATE_LABEL, formatCop, formatDateTime, label, RAIL_LABEL } from './format.js';

export interface AlertsDeps {
  token(): string | undefined;
  /** Any 401: back to the login form (true when that happened). */
  sessionLost(err: unknown): boolean;
}

const cop = (cents: number | null) => (cents === null ? '—' : formatCop(cents));

function settingsRow(a: BalanceAlert): HTMLElement {
  return h(
    'tr',
    { 'data-testid': 'alert-wallet', 'data-rail': a.rail },
    h('td', {}, label(RAIL_LABEL, a.rail)),
    h(
      'td',
      {},
      h(
        'span',
        { class: `badge badge-alert-${a.enabled ? a.state.toLowerCase() : 'off'}`, 'data-testid': 'alert-state' },
        a.enabled ? label(ALERT_STATE_LABEL, a.state) : 'Sin alerta',
      ),
    ),
    h('td', { class: 'num', 'data-testid': 'alert-available' }, formatCop(a.availableCents)),
    h('td', { class: 'num', 'data-testid': 'alert-low' }, cop(a.lowThresholdCents)),
    h('td', { class: 'num' }, cop(a.highThresholdCents)),
    h('td', { class: 'num' }, a.enabled ? formatCop(a.hysteresisCents) : '—'),
    h('td', {}, formatDateTime(a.updatedAt)),
  );
}

function eventRow(e: BalanceAlertEvent): HTMLElement {
  return h(
    'tr',
    { 'data-testid': 'alert-event', 'data-id': e.id },
    h('td', {}, formatDateTime(e.occurredAt)),
    h('td', {}, label(RAIL_LABEL, e.rail)),
    h('td', { 'data-testid': 'alert-event-kind' }, label(ALERT_KIND_LABEL, e.kind)),
    h('td', { class: 'num' }, formatCop(e.availableCents)),
    h('td', { class: 'num' }, formatCop(e.thresholdCents)),
  );
}

export function alertsPanel(deps: AlertsDeps) {
  const ui = {
    view: byId('alerts-view'),
    reload: byId<HTMLButtonElement>('alerts-reload'),
    message: byId('alerts-message'),
    settings: byId<HTMLTableSectionElement>('alert-settings'),
    rail: byId<HTMLSelectElement>('alert-rail-filter'),
    historyMessage: byId('alert-history-message'),
    history: byId<HTMLTableSectionElement>('alert-history'),
    more: byId<HTMLButtonElement>('alert-history-more'),
  };
  let generation = 0;
  let historyGeneration = 0;
  const failed = (err: unknown, fallback: string) => (err instanceof ApiError ? err.message : fallback);

  async function loadSettings(): Promise<void> {
    const token = deps.token();
    if (!token) return;
    const mine = ++generation;
    setMessage(ui.message, 'Cargando alertas…');
    try {
      const { items } = await api.balanceAlerts(token);
      if (mine !== generation) return;
      ui.settings.replaceChildren(...items.map(settingsRow));
      setMessage(
        ui.message,
        items.some((a) => a.enabled) ? '' : 'Ninguna billetera tiene alertas de saldo. Se configuran por la API (PUT /wallets/{rail}/alerts).',
      );
    } catch (err) {
      if (mine !== generation || deps.sessionLost(err)) return;
      setMessage(ui.message, failed(err, 'No se pudieron cargar las alertas.'), 'error');
    }
  }

  async function loadHistory(cursor?: string): Promise<void> {
    const token = deps.token();
    if (!token) return;
    const mine = cursor ? historyGeneration : ++historyGeneration;
    if (!cursor) setMessage(ui.historyMessage, 'Cargando historial…');
    try {
      const page = await api.balanceAlertHistory(token, { rail: ui.rail.value || undefined, cursor });
      if (mine !== historyGeneration) return;
      if (cursor) ui.history.append(...page.items.map(eventRow));
      else ui.history.replaceChildren(...page.items.map(eventRow));
      ui.more.hidden = !page.nextCursor;
      ui.more.onclick = page.nextCursor ? () => void loadHistory(page.nextCursor!) : null;
      if (!cursor) setMessage(ui.historyMessage, page.items.length === 0 ? 'Aún no se ha disparado ninguna alerta.' : '');
    } catch (err) {
      if (mine !== historyGeneration || deps.sessionLost(err)) return;
      setMessage(ui.historyMessage, failed(err, 'No se pudo cargar el historial de alertas.'), 'error');
    }
  }

  ui.reload.addEventListener('click', () => {
    void loadSettings();
    void loadHistory();
  });
  ui.rail.addEventListener('change', () => void loadHistory());

  return {
    show(): void {
      ui.view.hidden = false;
      void loadSettings();
      void loadHistory();
    },
    hide(): void {
      ui.view.hidden = true;
    },
    reset(): void {
      generation++;
      historyGeneration++;
      ui.view.hidden = true;
      ui.settings.replaceChildren();
      ui.history.replaceChildren();
      ui.more.hidden = true;
      setMessage(ui.message, '');
      setMessage(ui.historyMessage, '');
    },
  };
}
