// The operators' reconciliation page (/admin/conciliaciones): log in as an operator (password +
// TOTP), list the reconciliation runs (filters: rail, date), open a run with its breaks (both
// sides, the difference in COP) and resolve each (accept the provider's side, explain with a note,
// re-run the day); start a run for a rail and date. Accepting the provider's side and explaining are a
// person's judgement: one operator's choice is a request that a second, independent operator approves
// (or withdraws) here; the break shows it pending, never resolved. Same rules as the company dashboard: static
// HTML, this script from the same origin (strict CSP), text only through text nodes, the session
// token in sessionStorage sent as a Bearer header (no cookie, so no cross-site request can act).
import { ApiError, request } from './api.js';
import { byId, detail, h, setMessage } from './dom.js';
import { formatCop, formatDateTime, label } from './format.js';

interface OperatorSession {
  token: string;
  expiresAt: string;
}
interface Principal {
  kind: 'operator' | 'bootstrap-token';
  email: string | null;
}
interface Run {
  id: string;
  rail: string;
  date: string;
  trigger: string;
  status: string;
  requestedBy: string;
  startedAt: string;
  finishedAt: string | null;
  rejectReason: string | null;
  detail: string | null;
  report: { lines: number; amountCents: string; feeCents: string; netCents: string };
  ours: { count: number; amountCents: string; netCents: string };
  matched: { count: number; amountCents: string };
  breaks: { total: number; opened: number; byKind: Record<string, number> };
}
interface Break {
  key: string;
  kind: string;
  rail: string;
  date: string;
  ourId: string | null;
  providerId: string | null;
  ours: Record<string, unknown>;
  theirs: Record<string, unknown>;
  status: 'OPEN' | 'RESOLVED';
  runId: string;
  lastSeenRunId: string;
  openedAt: string;
  resolvedAt: string | null;
  resolution: string | null;
  exceptionId: string;
  differenceCents: string;
}
interface Page<T> {
  items: T[];
  nextCursor: string | null;
}
type Action = 'accept_provider' | 'explain' | 'rerun';
/** A resolution waiting for a second operator (POST /admin/exceptions/{id}/resolve answered 202). */
interface ResolutionRequest {
  id: string;
  action: 'EXCEPTION_RESOLVE';
  status: 'PENDING_APPROVAL' | 'APPROVED' | 'APPLIED' | 'FAILED' | 'REJECTED' | 'EXPIRED';
  payload: { exceptionId?: string; action?: string; note?: string };
  requestedAt: string;
}
const isRequest = (r: unknown): r is ResolutionRequest => (r as { action?: unknown } | null)?.action === 'EXCEPTION_RESOLVE';

const RAIL_LABEL: Record<string, string> = { breb: 'Bre-B (envíos)', 'breb-inbound': 'Bre-B (recaudos)', ach: 'ACH', pse: 'PSE' };
const RUN_STATUS_LABEL: Record<string, string> = { RUNNING: 'En curso', RECONCILED: 'Conciliada', REJECTED: 'Reporte rechazado', FAILED: 'Fallida' };
const TRIGGER_LABEL: Record<string, string> = { SCHEDULE: 'Programada', ON_DEMAND: 'Manual', RERUN: 'Reejecución' };
const KIND_LABEL: Record<string, string> = {
  missing_at_provider: 'Falta en el reporte del proveedor',
  missing_in_our_books: 'Falta en nuestros registros',
  amount_mismatch: 'Monto distinto',
  status_mismatch: 'Estado distinto',
  duplicate: 'Duplicada en el reporte',
  value_date_mismatch: 'Fecha valor distinta',
};
const BREAK_STATUS_LABEL: Record<string, string> = { OPEN: 'Abierta', RESOLVED: 'Resuelta' };
const RESOLUTION_LABEL: Record<string, string> = {
  accept_provider: 'Se aceptó el lado del proveedor',
  explain: 'Explicada',
  rerun: 'Desapareció al reejecutar',
  superseded: 'Reemplazada por una fecha valor posterior',
};
const ACTION_LABEL: Record<Action, string> = {
  accept_provider: 'Aceptar el lado del proveedor',
  explain: 'Explicar (solo nota)',
  rerun: 'Reejecutar la conciliación del día',
};
const SESSION_KEY = 'wallet.admin.session';

const api = {
  login: (email: string, password: string, totpCode: string) => request<OperatorSession>('POST', '/admin/auth/login', undefined, { email, password, totpCode }),
  me: (t: string) => request<Principal>('GET', '/admin/auth/me', t),
  logout: (t: string) => request<void>('POST', '/admin/auth/logout', t),
  runs: (t: string, q: Record<string, string>) => request<Page<Run>>('GET', `/admin/reconciliations?${new URLSearchParams(q).toString()}`, t),
  run: (t: string, id: string) => request<Run>('GET', `/admin/reconciliations/${encodeURIComponent(id)}`, t),
  breaks: (t: string, id: string, cursor?: string) =>
    request<Page<Break>>(
      'GET',
      `/admin/reconciliations/${encodeURIComponent(id)}/breaks?${new URLSearchParams(cursor ? { limit: '100', cursor } : { limit: '100' }).toString()}`,
      t,
    ),
  start: (t: string, rail: string, date: string) => request<Run>('POST', '/admin/reconciliations', t, { rail, date }),
  resolve: (t: string, exceptionId: string, action: Action, note: string) =>
    request<unknown>('POST', `/admin/exceptions/${encodeURIComponent(exceptionId)}/resolve`, t, { action, note }),
  resolutionRequests: (t: string, status: 'PENDING_APPROVAL' | 'APPROVED') =>
    request<Page<ResolutionRequest>>(
      'GET',
      `/admin/approval-requests?${new URLSearchParams({ action: 'EXCEPTION_RESOLVE', status, limit: '100' }).toString()}`,
      t,
    ),
  approve: (t: string, id: string) => request<ResolutionRequest>('POST', `/admin/approval-requests/${encodeURIComponent(id)}/approve`, t),
  reject: (t: string, id: string) => request<ResolutionRequest>('POST', `/admin/approval-requests/${encodeURIComponent(id)}/reject`, t, {}),
};

const ui = {
  boot: byId('boot'),
  sessionBar: byId('session-bar'),
  operatorEmail: byId('operator-email'),
  logout: byId<HTMLButtonElement>('logout-button'),
  loginView: byId('login-view'),
  loginForm: byId<HTMLFormElement>('login-form'),
  loginEmail: byId<HTMLInputElement>('login-email'),
  loginPassword: byId<HTMLInputElement>('login-password'),
  loginCode: byId<HTMLInputElement>('login-code'),
  loginMessage: byId('login-message'),
  loginSubmit: byId<HTMLButtonElement>('login-submit'),
  reconView: byId('recon-view'),
  startForm: byId<HTMLFormElement>('start-form'),
  startRail: byId<HTMLSelectElement>('start-rail'),
  startDate: byId<HTMLInputElement>('start-date'),
  startSubmit: byId<HTMLButtonElement>('start-submit'),
  startMessage: byId('start-message'),
  filterForm: byId<HTMLFormElement>('filter-form'),
  filterRail: byId<HTMLSelectElement>('filter-rail'),
  filterDate: byId<HTMLInputElement>('filter-date'),
  runsMessage: byId('runs-message'),
  runsBody: byId<HTMLTableSectionElement>('runs-body'),
  more: byId<HTMLButtonElement>('more-button'),
  detail: byId('detail-view'),
  summary: byId('run-summary'),
  breaksMessage: byId('breaks-message'),
  breakList: byId<HTMLUListElement>('break-list'),
};

let session: OperatorSession | undefined;
let runsCursor: string | null = null;
let runsGeneration = 0;
let expiryTimer: ReturnType<typeof setTimeout> | undefined;

/** Today in Bogotá (UTC-5 all year), YYYY-MM-DD. */
const todayBogota = () => new Date(Date.now() - 5 * 3_600_000).toISOString().slice(0, 10);
const dayFormat = new Intl.DateTimeFormat('es-CO', { timeZone: 'UTC', dateStyle: 'medium' });
const formatDay = (date: string) => {
  const t = Date.parse(`${date}T00:00:00Z`);
  return Number.isNaN(t) ? date : dayFormat.format(t);
};

// ---- session --------------------------------------------------------------------------------

function loadSession(): OperatorSession | undefined {
  try {
    const s = JSON.parse(sessionStorage.getItem(SESSION_KEY) ?? 'null') as Partial<OperatorSession> | null;
    if (typeof s?.token !== 'string' || typeof s.expiresAt !== 'string' || !(Date.parse(s.expiresAt) > Date.now())) return undefined;
    return { token: s.token, expiresAt: s.expiresAt };
  } catch {
    return undefined;
  }
}

function showLogin(message = '', kind: 'info' | 'success' | 'error' = 'info'): void {
  session = undefined;
  sessionStorage.removeItem(SESSION_KEY);
  if (expiryTimer) clearTimeout(expiryTimer);
  ui.boot.hidden = true;
  ui.sessionBar.hidden = true;
  ui.reconView.hidden = true;
  ui.runsBody.replaceChildren();
  ui.breakList.replaceChildren();
  ui.detail.hidden = true;
  ui.loginView.hidden = false;
  ui.loginPassword.value = '';
  ui.loginCode.value = '';
  setMessage(ui.loginMessage, message, kind);
  (ui.loginEmail.value ? ui.loginPassword : ui.loginEmail).focus();
}

/** A 401 means the session is gone (expired, logged out): back to the login form. */
function sessionLost(err: unknown): boolean {
  if (err instanceof ApiError && err.status === 401 && err.code !== 'OPERATOR_AUTH_FAILED') {
    showLogin(err.message, 'error');
    return true;
  }
  return false;
}
const messageOf = (err: unknown, fallback: string) => (err instanceof ApiError ? err.message : fallback);

async function enter(s: OperatorSession): Promise<void> {
  session = s;
  const me = await api.me(s.token);
  ui.operatorEmail.textContent = me.email ?? 'Token de arranque';
  ui.boot.hidden = true;
  ui.loginView.hidden = true;
  ui.sessionBar.hidden = false;
  ui.reconView.hidden = false;
  const today = todayBogota();
  ui.startDate.max = today;
  ui.filterDate.max = today;
  if (!ui.startDate.value) ui.startDate.value = today;
  if (expiryTimer) clearTimeout(expiryTimer);
  const left = Date.parse(s.expiresAt) - Date.now();
  expiryTimer = setTimeout(() => showLogin('Tu sesión expiró. Ingresa de nuevo.'), Math.min(Math.max(left, 0), 2 ** 31 - 1));
  await loadRuns();
  const fromHash = /^#run=(run_[0-9a-f]{32})$/.exec(location.hash)?.[1];
  if (fromHash) await openRun(fromHash);
}

ui.loginForm.addEventListener('submit', async (ev) => {
  ev.preventDefault();
  const email = ui.loginEmail.value.trim();
  const password = ui.loginPassword.value;
  const code = ui.loginCode.value.trim();
  if (!email || !password || !/^\d{6}$/.test(code)) {
    setMessage(ui.loginMessage, 'Ingresa tu correo, tu contraseña y el código de 6 dígitos.', 'error');
    return;
  }
  ui.loginSubmit.disabled = true;
  ui.loginSubmit.textContent = 'Ingresando…';
  setMessage(ui.loginMessage, '');
  try {
    const s = await api.login(email, password, code);
    sessionStorage.setItem(SESSION_KEY, JSON.stringify({ token: s.token, expiresAt: s.expiresAt }));
    await enter(s);
  } catch (err) {
    ui.loginEmail.value = email;
    showLogin(messageOf(err, 'No se pudo iniciar sesión. Inténtalo de nuevo.'), 'error');
  } finally {
    ui.loginSubmit.disabled = false;
    ui.loginSubmit.textContent = 'Ingresar';
  }
});

ui.logout.addEventListener('click', async () => {
  const token = session?.token;
  try {
    if (token) await api.logout(token);
  } catch {
    /* the session ends here anyway */
  }
  ui.loginEmail.value = '';
  showLogin('Cerraste sesión.');
});

// ---- runs -----------------------------------------------------------------------------------

function runRow(r: Run): HTMLTableRowElement {
  const open = h(
    'button',
    { type: 'button', class: 'btn btn-ghost', 'data-testid': 'run-open', 'aria-label': `Ver detalle: ${label(RAIL_LABEL, r.rail)}, ${formatDay(r.date)}` },
    'Ver detalle',
  );
  open.addEventListener('click', () => void openRun(r.id));
  return h(
    'tr',
    { 'data-testid': 'run-row', 'data-run-id': r.id },
    h('td', { 'data-testid': 'run-date' }, formatDay(r.date)),
    h('td', { 'data-testid': 'run-rail' }, label(RAIL_LABEL, r.rail)),
    h('td', {}, h('span', { class: `badge badge-run-${r.status.toLowerCase()}`, 'data-testid': 'run-status' }, label(RUN_STATUS_LABEL, r.status))),
    h('td', { 'data-testid': 'run-breaks' }, r.status === 'RECONCILED' ? `${r.breaks.total} (${r.breaks.opened} nuevas)` : '—'),
    h('td', {}, formatDateTime(r.startedAt)),
    h('td', {}, open),
  );
}

function runFilters(): Record<string, string> {
  const q: Record<string, string> = { limit: '20' };
  if (ui.filterRail.value) q.rail = ui.filterRail.value;
  if (ui.filterDate.value) q.date = ui.filterDate.value;
  return q;
}

async function loadRuns(append = false): Promise<void> {
  if (!session) return;
  const generation = ++runsGeneration;
  const q = runFilters();
  if (append && runsCursor) q.cursor = runsCursor;
  setMessage(ui.runsMessage, 'Cargando conciliaciones…');
  try {
    const page = await api.runs(session.token, q);
    if (generation !== runsGeneration) return;
    const rows = page.items.map(runRow);
    if (append) ui.runsBody.append(...rows);
    else ui.runsBody.replaceChildren(...rows);
    runsCursor = page.nextCursor;
    ui.more.hidden = !page.nextCursor;
    setMessage(ui.runsMessage, ui.runsBody.children.length === 0 ? 'No hay conciliaciones con esos filtros.' : '');
  } catch (err) {
    if (!sessionLost(err)) setMessage(ui.runsMessage, messageOf(err, 'No se pudieron cargar las conciliaciones.'), 'error');
  }
}

ui.filterForm.addEventListener('submit', (ev) => {
  ev.preventDefault();
  void loadRuns();
});
ui.more.addEventListener('click', () => void loadRuns(true));

ui.startForm.addEventListener('submit', async (ev) => {
  ev.preventDefault();
  if (!session) return;
  const rail = ui.startRail.value;
  const date = ui.startDate.value;
  if (!/^\d{4}-\d{2}-\d{2}$/.test(date)) {
    setMessage(ui.startMessage, 'Elige la fecha a conciliar.', 'error');
    return;
  }
  if (date > todayBogota()) {
    setMessage(ui.startMessage, 'La fecha no puede ser posterior a hoy (hora de Colombia).', 'error');
    return;
  }
  ui.startSubmit.disabled = true;
  setMessage(ui.startMessage, 'Iniciando…');
  try {
    const run = await api.start(session.token, rail, date);
    setMessage(
      ui.startMessage,
      `Conciliación ${label(RAIL_LABEL, run.rail)} del ${formatDay(run.date)}: ${label(RUN_STATUS_LABEL, run.status).toLowerCase()}.`,
      'success',
    );
    await loadRuns();
    await openRun(run.id);
  } catch (err) {
    if (!sessionLost(err)) setMessage(ui.startMessage, messageOf(err, 'No se pudo iniciar la conciliación.'), 'error');
  } finally {
    ui.startSubmit.disabled = false;
  }
});

// ---- one run and its breaks -------------------------------------------------------------------

/** Names of the fields a side usually has; any other is shown under its own name. */
const FIELD_LABEL: Record<string, string> = {
  ourId: 'Referencia nuestra',
  providerId: 'Referencia del proveedor',
  status: 'Estado',
  amountCents: 'Monto',
  feeCents: 'Comisión',
  providerFeeCents: 'Comisión del proveedor',
  settledAt: 'Liquidada',
  settledDate: 'Fecha de liquidación',
  valueDate: 'Fecha valor',
  acceptedAt: 'Aceptada',
  direction: 'Dirección',
  counterparty: 'Contraparte',
  lineNo: 'Línea del reporte',
  companyId: 'Empresa',
  lines: 'Líneas',
};
/** A field's value as text: centavos (`…Cents`) in COP, instants (`…At`) in Colombia's time, anything else as sent. */
function fieldText(key: string, v: unknown): string {
  if (/Cents$/.test(key) && (typeof v === 'string' || typeof v === 'number') && /^-?\d+$/.test(String(v))) return formatCop(String(v));
  if (/At$/.test(key) && typeof v === 'string') return formatDateTime(v);
  return typeof v === 'string' ? v : JSON.stringify(v);
}

/** One side of a break (our record or the provider's line(s)): each field, text only. */
function side(title: string, data: Record<string, unknown>, testid: string): HTMLElement {
  const entries = Object.entries(data);
  return h(
    'div',
    { class: 'side', 'data-testid': testid },
    h('h4', {}, title),
    entries.length === 0
      ? h('p', { class: 'muted small' }, 'Sin registro.')
      : h('dl', { class: 'details' }, ...entries.flatMap(([k, v]) => detail(FIELD_LABEL[k] ?? k, fieldText(k, v)))),
  );
}

function resolveForm(b: Break, result: HTMLElement): HTMLFormElement {
  const base = `resolve-${b.exceptionId}`;
  const radios = (Object.keys(ACTION_LABEL) as Action[]).map((a, i) =>
    h(
      'label',
      { class: 'choice' },
      h('input', { type: 'radio', name: `${base}-action`, value: a, required: true, checked: i === 1, 'data-testid': `resolve-action-${a}` }),
      ` ${ACTION_LABEL[a]}`,
    ),
  );
  const note = h('textarea', { id: `${base}-note`, name: 'note', maxlength: '500', rows: '2', required: true, 'data-testid': 'resolve-note' });
  const submit = h('button', { type: 'submit', class: 'btn btn-primary', 'data-testid': 'resolve-submit' }, 'Resolver');
  const form = h(
    'form',
    { class: 'actions', novalidate: true, 'data-testid': 'resolve-form', 'aria-label': `Resolver la diferencia ${b.key}` },
    h('fieldset', {}, h('legend', {}, 'Resolver'), ...radios),
    h('div', { class: 'field' }, h('label', { for: `${base}-note` }, 'Nota (obligatoria, hasta 500 caracteres)'), note),
    h('div', { class: 'buttons' }, submit),
  );
  form.addEventListener('submit', async (ev) => {
    ev.preventDefault();
    if (!session) return;
    const action = (form.querySelector<HTMLInputElement>(`input[name="${base}-action"]:checked`)?.value ?? '') as Action;
    const text = note.value.trim();
    if (!action || !text || [...text].length > 500) {
      setMessage(result, 'Elige una acción y escribe una nota (hasta 500 caracteres).', 'error');
      note.focus();
      return;
    }
    submit.disabled = true;
    setMessage(result, action === 'rerun' ? 'Reejecutando la conciliación del día…' : 'Resolviendo…');
    try {
      const answer = await api.resolve(session.token, b.exceptionId, action, text);
      if (isRequest(answer)) {
        // 202: nothing changed yet; the break stays open until a second operator approves.
        setMessage(result, 'Solicitud enviada: otro operador debe aprobarla.', 'success');
        await loadBreaks(currentRunId!, `La resolución de la diferencia ${b.key} espera la aprobación de otro operador; sigue abierta.`);
        return;
      }
      setMessage(result, 'Diferencia resuelta.', 'success');
      await loadBreaks(currentRunId!, `La diferencia ${b.key} quedó resuelta.`);
    } catch (err) {
      if (!sessionLost(err)) setMessage(result, messageOf(err, 'No se pudo resolver la diferencia.'), 'error');
      submit.disabled = false;
    }
  });
  return form;
}

/** A break's resolution that waits for a second operator: what was asked, and approve / withdraw (the gateway says who may). */
function pendingResolution(b: Break, r: ResolutionRequest, result: HTMLElement): HTMLElement {
  const approve = h('button', { type: 'button', class: 'btn btn-primary', 'data-testid': 'resolution-approve' }, 'Aprobar');
  const reject = h('button', { type: 'button', class: 'btn btn-danger', 'data-testid': 'resolution-reject' }, 'Rechazar');
  const act = (run: (t: string, id: string) => Promise<ResolutionRequest>, done: (r: ResolutionRequest) => string, failed: string) => async () => {
    if (!session) return;
    approve.disabled = true;
    reject.disabled = true;
    setMessage(result, 'Enviando…');
    try {
      const after = await run(session.token, r.id);
      await loadBreaks(currentRunId!, done(after));
    } catch (err) {
      if (!sessionLost(err)) setMessage(result, messageOf(err, failed), 'error');
      approve.disabled = false;
      reject.disabled = false;
    }
  };
  approve.addEventListener(
    'click',
    act(
      api.approve,
      (after) => (after.status === 'APPLIED' ? `La diferencia ${b.key} quedó resuelta.` : `La solicitud de la diferencia ${b.key} terminó ${after.status}.`),
      'No se pudo aprobar la solicitud.',
    ),
  );
  reject.addEventListener(
    'click',
    act(api.reject, () => `Se rechazó la solicitud de la diferencia ${b.key}; sigue abierta.`, 'No se pudo rechazar la solicitud.'),
  );
  const asked = r.payload.action as Action | undefined;
  return h(
    'div',
    { class: 'actions', 'data-testid': 'resolution-request', 'data-request-id': r.id },
    h(
      'dl',
      { class: 'details' },
      ...detail('Resolución solicitada', asked && asked in ACTION_LABEL ? ACTION_LABEL[asked] : (asked ?? '—'), 'resolution-action'),
      ...detail('Nota', r.payload.note ?? '—'),
      ...detail('Solicitada', formatDateTime(r.requestedAt)),
      ...detail('Estado', r.status === 'APPROVED' ? 'Aprobada; quien aprobó debe aprobar de nuevo para terminarla' : 'Espera la aprobación de otro operador'),
    ),
    h('div', { class: 'buttons' }, approve, r.status === 'PENDING_APPROVAL' ? reject : null),
  );
}

function breakCard(b: Break, pending: Map<string, ResolutionRequest>): HTMLLIElement {
  const headingId = `break-${b.exceptionId}-title`;
  const result = h('p', { class: 'msg', role: 'status', 'aria-live': 'polite', 'data-testid': 'resolve-result', hidden: true });
  const asked = b.status === 'OPEN' ? pending.get(b.exceptionId) : undefined;
  return h(
    'li',
    { class: `card approval status-${b.status.toLowerCase()}`, 'data-testid': 'break', 'data-break-key': b.key, 'aria-labelledby': headingId },
    h(
      'div',
      { class: 'approval-head' },
      h('h3', { id: headingId }, label(KIND_LABEL, b.kind)),
      h(
        'div',
        { class: 'badges' },
        h('span', { class: `badge badge-${b.status === 'OPEN' ? 'pending' : 'approved'}`, 'data-testid': 'break-status' }, label(BREAK_STATUS_LABEL, b.status)),
        asked ? h('span', { class: 'badge badge-pending', 'data-testid': 'break-approval' }, 'Aprobación pendiente') : null,
      ),
    ),
    h(
      'dl',
      { class: 'details' },
      ...detail('Diferencia', formatCop(b.differenceCents), 'break-difference'),
      ...detail('Referencia nuestra', b.ourId ?? '—', 'break-our-id'),
      ...detail('Referencia del proveedor', b.providerId ?? '—', 'break-provider-id'),
      ...detail('Clave', b.key),
      ...detail('Encontrada', formatDateTime(b.openedAt)),
      ...(b.status === 'RESOLVED'
        ? [...detail('Resolución', label(RESOLUTION_LABEL, b.resolution), 'break-resolution'), ...detail('Resuelta', formatDateTime(b.resolvedAt))]
        : []),
    ),
    h('div', { class: 'sides' }, side('Nuestro registro', b.ours, 'break-ours'), side('Reporte del proveedor', b.theirs, 'break-theirs')),
    asked ? pendingResolution(b, asked, result) : b.status === 'OPEN' ? resolveForm(b, result) : null,
    result,
  );
}

let currentRunId: string | undefined;

function summary(r: Run): void {
  const refresh = h('button', { type: 'button', class: 'btn btn-ghost', 'data-testid': 'run-refresh' }, 'Actualizar');
  refresh.addEventListener('click', () => {
    void loadRuns();
    void openRun(r.id);
  });
  ui.summary.replaceChildren(
    ...detail('Riel', label(RAIL_LABEL, r.rail), 'summary-rail'),
    ...detail('Fecha', formatDay(r.date), 'summary-date'),
    ...detail('Estado', label(RUN_STATUS_LABEL, r.status), 'summary-status'),
    ...(r.rejectReason ? detail('Motivo del rechazo', r.rejectReason) : []),
    ...(r.detail ? detail('Detalle', r.detail) : []),
    ...detail('Origen', `${label(TRIGGER_LABEL, r.trigger)} · ${r.requestedBy}`),
    ...detail('Iniciada', formatDateTime(r.startedAt)),
    ...detail('Terminada', formatDateTime(r.finishedAt)),
    ...detail(
      'Reporte del proveedor',
      `${r.report.lines} líneas · ${formatCop(r.report.amountCents)} · comisiones ${formatCop(r.report.feeCents)} · neto ${formatCop(r.report.netCents)}`,
      'summary-report',
    ),
    ...detail('Nuestros registros', `${r.ours.count} · ${formatCop(r.ours.amountCents)} · neto ${formatCop(r.ours.netCents)}`, 'summary-ours'),
    ...detail('Conciliados', `${r.matched.count} · ${formatCop(r.matched.amountCents)}`),
    ...detail('Diferencias', `${r.breaks.total} (${r.breaks.opened} nuevas)`, 'summary-breaks'),
    h('dd', {}, refresh),
  );
}

async function loadBreaks(runId: string, announce = ''): Promise<void> {
  if (!session) return;
  setMessage(ui.breaksMessage, 'Cargando diferencias…');
  try {
    const token = session.token;
    const items: Break[] = [];
    let cursor: string | undefined;
    // Read beside the breaks; without it (a failure) each open break shows its form, as before.
    const asked = resolutionRequests(token).catch(() => new Map<string, ResolutionRequest>());
    do {
      const page = await api.breaks(token, runId, cursor);
      items.push(...page.items);
      cursor = page.nextCursor ?? undefined;
    } while (cursor && items.length < 1000);
    const pending = await asked;
    if (runId !== currentRunId) return;
    ui.breakList.replaceChildren(...items.map((b) => breakCard(b, pending)));
    setMessage(ui.breaksMessage, announce || (items.length === 0 ? 'Esta conciliación no encontró diferencias.' : ''), announce ? 'success' : 'info');
  } catch (err) {
    if (!sessionLost(err)) setMessage(ui.breaksMessage, messageOf(err, 'No se pudieron cargar las diferencias.'), 'error');
  }
}

/**
 * The open resolution requests (waiting for a second operator, or approved and not yet finished), by
 * exception id. The newest 100 of each: enough for a page an operator reads; a break whose request is
 * older shows its form, and resolving it again answers 409 naming the open request.
 */
async function resolutionRequests(token: string): Promise<Map<string, ResolutionRequest>> {
  const [waiting, approved] = await Promise.all([api.resolutionRequests(token, 'PENDING_APPROVAL'), api.resolutionRequests(token, 'APPROVED')]);
  const byException = new Map<string, ResolutionRequest>();
  for (const r of [...approved.items, ...waiting.items]) if (r.payload.exceptionId) byException.set(r.payload.exceptionId, r);
  return byException;
}

async function openRun(id: string): Promise<void> {
  if (!session) return;
  currentRunId = id;
  ui.detail.hidden = false;
  ui.breakList.replaceChildren();
  try {
    const run = await api.run(session.token, id);
    if (id !== currentRunId) return;
    summary(run);
    history.replaceState(null, '', `#run=${id}`);
    ui.detail.focus();
    await loadBreaks(id);
  } catch (err) {
    if (!sessionLost(err)) {
      ui.summary.replaceChildren();
      setMessage(ui.breaksMessage, messageOf(err, 'No se pudo cargar la conciliación.'), 'error');
    }
  }
}

// ---- start ----------------------------------------------------------------------------------

const saved = loadSession();
if (saved) {
  enter(saved).catch((err) => showLogin(messageOf(err, 'Ingresa de nuevo.'), 'error'));
} else {
  showLogin();
}
