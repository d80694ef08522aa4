// «Pagos programados» (docs/schedules.md): the company's scheduled sends and moves, read only (they
// are created and changed through the API) — what each does, when, its next run in Colombia, the
// runs it made and why one failed — and what the next runs need against the balances now.
import { api, ApiError, type Recurrence, type Schedule, type ScheduleAction, type ScheduleProjection, type ScheduleRun } from './api.js';
import { byId, h, setMessage } from './dom.js';
import { formatCop, formatDateTime, label, RAIL_LABEL, SCHEDULE_RUN_STATUS_LABEL, SCHEDULE_STATUS_LABEL } from './format.js';

export interface SchedulesDeps {
  token(): string | undefined;
  /** Any 401: back to the login form (true when that happened). */
  sessionLost(err: unknown): boolean;
}

const WEEKDAY: Record<string, string> = { MON: 'lunes', TUE: 'martes', WED: 'miércoles', THU: 'jueves', FRI: 'viernes', SAT: 'sábado', SUN: 'domingo' };
const BUSINESS_DAY: Record<string, string> = {
  PREVIOUS: 'si no es día hábil, el día hábil anterior',
  NEXT: 'si no es día hábil, el siguiente día hábil',
  SKIP: 'si no es día hábil, no se hace',
};

/** The recurrence in words ("Cada viernes a las 08:00"), with what a holiday does. */
export function recurrenceText(r: Recurrence, businessDayRule: string): string {
  let text: string;
  switch (r.kind) {
    case 'ONCE':
      text = `Una vez, el ${formatDateTime(r.executeAt)}`;
      break;
    case 'MONTHLY':
      text = `Cada mes, el día ${r.dayOfMonth} a las ${r.time}`;
      break;
    case 'LAST_BUSINESS_DAY':
      text = `El último día hábil de cada mes a las ${r.time}`;
      break;
    case 'WEEKLY':
      text = `Cada ${WEEKDAY[r.dayOfWeek] ?? r.dayOfWeek} a las ${r.time}`;
      break;
    case 'CRON':
      text = `Según la expresión cron «${r.expression}» (hora de Colombia)`;
      break;
    default:
      text = (r as { kind: string }).kind;
  }
  const rule = r.kind === 'ONCE' ? undefined : BUSINESS_DAY[businessDayRule];
  return rule ? `${text}; ${rule}` : text;
}

const masked = (n: string) => `••••${n.slice(-4)}`;

/** What each run does ("Enviar $ 13.000,00 a Ana María Pérez Gómez (cuenta ••••8901, ACH)"). */
export function actionText(a: ScheduleAction): string {
  switch (a.kind) {
    case 'SEND': {
      const s = a.send;
      const d = s.destination;
      let to = '—';
      if (s.counterpartyId) to = `la contraparte ${s.counterpartyId}`;
      else if (d?.brebKey) to = `${s.targetName ? `${s.targetName} ` : ''}(llave ${d.brebKey.value}, Bre-B)`;
      else if (d?.bankAccount) {
        const holder = [d.bankAccount.holderFirstName, d.bankAccount.holderLastName].filter(Boolean).join(' ');
        to = `${holder ? `${holder} ` : ''}(cuenta ${masked(d.bankAccount.accountNumber)}, ACH)`;
      }
      return `Enviar ${formatCop(s.amount)} a ${to}`;
    }
    case 'BATCH': {
      const total = a.batch.items.reduce((sum, i) => sum + i.amount, 0);
      return `Pagar un lote de ${a.batch.items.length} ${a.batch.items.length === 1 ? 'pago' : 'pagos'} por ${formatCop(total)}`;
    }
    case 'MOVE':
      return `Mover ${formatCop(a.amountCents)} de ${label(RAIL_LABEL, a.from)} a ${label(RAIL_LABEL, a.to)}`;
    case 'TOP_UP':
      return `Completar ${label(RAIL_LABEL, a.to)} hasta ${formatCop(a.targetBalanceCents)} desde ${label(RAIL_LABEL, a.from)}`;
    default:
      return (a as { kind: string }).kind;
  }
}

function runRow(r: ScheduleRun): HTMLElement {
  const made = r.transferId ? `Transferencia ${r.transferId}` : r.batchId ? `Lote ${r.batchId}` : r.walletMoveId ? `Movimiento ${r.walletMoveId}` : '—';
  return h(
    'tr',
    { 'data-testid': 'schedule-run-row', 'data-id': r.id },
    h('td', { class: 'num' }, String(r.seq)),
    h(
      'td',
      {},
      h('span', { class: `badge badge-run-${r.status.toLowerCase()}`, 'data-testid': 'schedule-run-status' }, label(SCHEDULE_RUN_STATUS_LABEL, r.status)),
    ),
    h('td', {}, formatDateTime(r.dueAt)),
    h('td', { class: 'num' }, r.amountCents === null ? '—' : formatCop(r.amountCents)),
    h('td', { 'data-testid': 'schedule-run-made' }, made),
    h('td', { 'data-testid': 'schedule-run-error' }, r.error ? r.error.message : '—'),
  );
}

function projectionView(p: ScheduleProjection): HTMLElement[] {
  const warnings = p.warnings.map((w) => h('p', { class: 'msg msg-error', 'data-testid': 'projection-warning' }, w));
  const table = h(
    'table',
    { class: 'runs', 'data-testid': 'projection-table' },
    h('caption', { class: 'sr-only' }, 'Proyección por billetera'),
    h(
      'thead',
      {},
      h(
        'tr',
        {},
        h('th', { scope: 'col' }, 'Billetera'),
        h('th', { scope: 'col', class: 'num' }, 'Disponible hoy'),
        h('th', { scope: 'col', class: 'num' }, 'Salidas'),
        h('th', { scope: 'col', class: 'num' }, 'Entradas'),
        h('th', { scope: 'col', class: 'num' }, 'Saldo más bajo'),
        h('th', { scope: 'col', class: 'num' }, 'Faltante'),
      ),
    ),
    h(
      'tbody',
      {},
      ...p.wallets.map((w) =>
        h(
          'tr',
          { 'data-testid': 'projection-wallet', 'data-rail': w.rail },
          h('td', {}, label(RAIL_LABEL, w.rail)),
          h('td', { class: 'num' }, formatCop(w.availableCents)),
          h('td', { class: 'num' }, formatCop(w.outflowCents)),
          h('td', { class: 'num' }, formatCop(w.inflowCents)),
          h('td', { class: 'num' }, formatCop(w.lowestBalanceCents)),
          h('td', { class: 'num', 'data-testid': 'projection-shortfall' }, w.shortfallCents === '0' ? '—' : formatCop(w.shortfallCents)),
        ),
      ),
    ),
  );
  const span = h(
    'p',
    { class: 'muted small' },
    `Ejecuciones que vencen entre el ${formatDateTime(p.from)} y el ${formatDateTime(p.until)}: ${p.runs.length}. Sin comisiones.`,
  );
  const ok =
    p.warnings.length === 0
      ? [h('p', { class: 'msg msg-success', 'data-testid': 'projection-ok' }, 'El saldo alcanza para los pagos programados de este periodo.')]
      : [];
  return [...warnings, ...ok, table, span];
}

export function schedulesPanel(deps: SchedulesDeps) {
  const ui = {
    view: byId('schedules-view'),
    filters: byId<HTMLFormElement>('schedule-filters'),
    status: byId<HTMLSelectElement>('schedule-status-filter'),
    days: byId<HTMLSelectElement>('projection-days'),
    message: byId('schedule-message'),
    list: byId<HTMLTableSectionElement>('schedule-list'),
    more: byId<HTMLButtonElement>('schedule-more'),
    projection: byId('schedule-projection'),
    projectionMessage: byId('projection-message'),
    runsPanel: byId('schedule-runs-panel'),
    runsTitle: byId('schedule-runs-title'),
    runsMessage: byId('schedule-runs-message'),
    runs: byId<HTMLTableSectionElement>('schedule-run-list'),
    runsMore: byId<HTMLButtonElement>('schedule-runs-more'),
  };
  let generation = 0;
  let runsGeneration = 0;
  let projectionGeneration = 0;

  const failed = (err: unknown, fallback: string) => (err instanceof ApiError ? err.message : fallback);

  function row(s: Schedule): HTMLElement {
    const open = h('button', { type: 'button', class: 'btn btn-ghost', 'data-testid': 'schedule-open' }, 'Ver ejecuciones');
    open.addEventListener('click', () => void loadRuns(s));
    return h(
      'tr',
      { 'data-testid': 'schedule-row', 'data-id': s.id },
      h('td', { 'data-testid': 'schedule-description' }, s.description ?? '—'),
      h(
        'td',
        {},
        h('span', { class: `badge badge-schedule-${s.status.toLowerCase()}`, 'data-testid': 'schedule-status' }, label(SCHEDULE_STATUS_LABEL, s.status)),
      ),
      h('td', { 'data-testid': 'schedule-recurrence' }, recurrenceText(s.recurrence, s.businessDayRule)),
      h('td', { 'data-testid': 'schedule-action' }, actionText(s.action)),
      h('td', { 'data-testid': 'schedule-next' }, s.nextRun ? formatDateTime(s.nextRun.dueAt) : '—'),
      h('td', { class: 'num', 'data-testid': 'schedule-runs-started' }, s.maxRuns === null ? String(s.runsStarted) : `${s.runsStarted} de ${s.maxRuns}`),
      h('td', {}, open),
    );
  }

  async function load(cursor?: string): Promise<void> {
    const token = deps.token();
    if (!token) return;
    const mine = cursor ? generation : ++generation;
    if (!cursor) {
      setMessage(ui.message, 'Cargando pagos programados…');
      ui.runsPanel.hidden = true;
    }
    try {
      const page = await api.schedules(token, { status: ui.status.value || undefined, cursor });
      if (mine !== generation) return;
      if (cursor) ui.list.append(...page.items.map(row));
      else ui.list.replaceChildren(...page.items.map(row));
      ui.more.hidden = !page.nextCursor;
      ui.more.onclick = page.nextCursor ? () => void load(page.nextCursor!) : null;
      if (!cursor) setMessage(ui.message, page.items.length === 0 ? 'No hay pagos programados.' : '');
    } catch (err) {
      if (mine !== generation || deps.sessionLost(err)) return;
      setMessage(ui.message, failed(err, 'No se pudieron cargar los pagos programados.'), 'error');
    }
  }

  async function loadProjection(): Promise<void> {
    const token = deps.token();
    if (!token) return;
    const mine = ++projectionGeneration;
    setMessage(ui.projectionMessage, 'Calculando…');
    try {
      const p = await api.scheduleProjection(token, Number(ui.days.value) || 7);
      if (mine !== projectionGeneration) return;
      ui.projection.replaceChildren(...projectionView(p));
      setMessage(ui.projectionMessage, '');
    } catch (err) {
      if (mine !== projectionGeneration || deps.sessionLost(err)) return;
      ui.projection.replaceChildren();
      setMessage(ui.projectionMessage, failed(err, 'No se pudo calcular la proyección.'), 'error');
    }
  }

  async function loadRuns(s: Schedule, cursor?: string): Promise<void> {
    const token = deps.token();
    if (!token) return;
    const mine = cursor ? runsGeneration : ++runsGeneration;
    if (!cursor) {
      ui.runsPanel.hidden = false;
      ui.runsTitle.textContent = `Ejecuciones: ${s.description ?? recurrenceText(s.recurrence, s.businessDayRule)}`;
      ui.runs.replaceChildren();
      ui.runsMore.hidden = true;
      setMessage(ui.runsMessage, 'Cargando ejecuciones…');
    }
    try {
      const page = await api.scheduleRuns(token, s.id, cursor);
      if (mine !== runsGeneration) return;
      ui.runs.append(...page.items.map(runRow));
      ui.runsMore.hidden = !page.nextCursor;
      ui.runsMore.onclick = page.nextCursor ? () => void loadRuns(s, page.nextCursor!) : null;
      if (!cursor) setMessage(ui.runsMessage, page.items.length === 0 ? 'Este pago programado aún no tiene ejecuciones.' : '');
    } catch (err) {
      if (mine !== runsGeneration || deps.sessionLost(err)) return;
      setMessage(ui.runsMessage, failed(err, 'No se pudieron cargar las ejecuciones.'), 'error');
    }
  }

  ui.filters.addEventListener('submit', (ev) => {
    ev.preventDefault();
    void load();
    void loadProjection();
  });
  ui.status.addEventListener('change', () => void load());
  ui.days.addEventListener('change', () => void loadProjection());

  return {
    show(): void {
      ui.view.hidden = false;
      void load();
      void loadProjection();
    },
    hide(): void {
      ui.view.hidden = true;
    },
    reset(): void {
      generation++;
      runsGeneration++;
      projectionGeneration++;
      ui.view.hidden = true;
      ui.list.replaceChildren();
      ui.runs.replaceChildren();
      ui.projection.replaceChildren();
      ui.runsPanel.hidden = true;
      ui.more.hidden = true;
      ui.runsMore.hidden = true;
      setMessage(ui.message, '');
      setMessage(ui.runsMessage, '');
      setMessage(ui.projectionMessage, '');
    },
  };
}
