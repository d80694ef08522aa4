// The company dashboard: log in, list the approvals of the company, sign or reject a transfer or a
// bulk payout (batches.ts) with a TOTP code; and the self-enrolment of an invited user (`/dashboard#invitation=winv_…`).
// Plain DOM: index.html holds the static skeleton, the cards are built here.
import { api, ApiError, clearSession, loadSession, saveSession, type Approval, type ApprovalStatus, type Me, type Session } from './api.js';
import { batchesPanel } from './batches.js';
import { cobrosPanel } from './cobros.js';
import { counterpartiesPanel } from './contrapartes.js';
import { schedulesPanel } from './programados.js';
import { alertsPanel } from './alertas.js';
import { policyPanel } from './politica.js';
import { TOTP, decisionForm, decisionText, signaturesView, type Outcome } from './decision.js';
import { byId, detail, h, setMessage } from './dom.js';
import { APPROVAL_STATUS_LABEL, formatCop, formatDateTime, label, RAIL_LABEL, ROLE_LABEL, TRANSACTION_STATUS_LABEL } from './format.js';

const EMPTY: Record<ApprovalStatus, string> = {
  PENDING: 'No hay transferencias pendientes de aprobación.',
  APPROVED: 'No hay aprobaciones aprobadas.',
  REJECTED: 'No hay aprobaciones rechazadas.',
  EXPIRED: 'No hay aprobaciones vencidas.',
};

const ui = {
  boot: byId('boot'),
  sessionBar: byId('session-bar'),
  companyName: byId('company-name'),
  userEmail: byId('user-email'),
  userRole: byId('user-role'),
  logout: byId<HTMLButtonElement>('logout-button'),
  loginView: byId('login-view'),
  loginForm: byId<HTMLFormElement>('login-form'),
  loginEmail: byId<HTMLInputElement>('login-email'),
  loginPassword: byId<HTMLInputElement>('login-password'),
  loginMessage: byId('login-message'),
  loginSubmit: byId<HTMLButtonElement>('login-submit'),
  approvalsView: byId('approvals-view'),
  nav: byId('section-nav'),
  navApprovals: byId<HTMLButtonElement>('nav-approvals'),
  navCobros: byId<HTMLButtonElement>('nav-cobros'),
  navPolicy: byId<HTMLButtonElement>('nav-policy'),
  navCounterparties: byId<HTMLButtonElement>('nav-counterparties'),
  navSchedules: byId<HTMLButtonElement>('nav-schedules'),
  navAlerts: byId<HTMLButtonElement>('nav-alerts'),
  filter: byId<HTMLSelectElement>('status-filter'),
  refresh: byId<HTMLButtonElement>('refresh-button'),
  listMessage: byId('list-message'),
  list: byId<HTMLUListElement>('approval-list'),
  more: byId<HTMLButtonElement>('more-button'),
  enrolView: byId('enrol-view'),
  enrolIntro: byId('enrol-intro'),
  enrolMessage: byId('enrol-message'),
  enrolPasswordForm: byId<HTMLFormElement>('enrol-password-form'),
  enrolPassword: byId<HTMLInputElement>('enrol-password'),
  enrolPasswordAgain: byId<HTMLInputElement>('enrol-password-again'),
  enrolPasswordSubmit: byId<HTMLButtonElement>('enrol-password-submit'),
  enrolCodeForm: byId<HTMLFormElement>('enrol-code-form'),
  enrolSecretBox: byId('enrol-secret-box'),
  enrolSecret: byId('enrol-secret'),
  enrolOtpauth: byId<HTMLAnchorElement>('enrol-otpauth'),
  enrolCode: byId<HTMLInputElement>('enrol-code'),
  enrolCodeSubmit: byId<HTMLButtonElement>('enrol-code-submit'),
  enrolToLogin: byId<HTMLButtonElement>('enrol-to-login'),
};

let session: Session | undefined;
let me: Me | undefined;
let expiryTimer: ReturnType<typeof setTimeout> | undefined;
/** Bumped on every list load, so a slow older answer never overwrites a newer one. */
let listGeneration = 0;

const batches = batchesPanel({
  token: () => session?.token,
  me: () => me,
  sessionLost: (err) => handleSessionLoss(err),
  showLogin: () => showLogin(),
  showApprovals: () => {
    ui.approvalsView.hidden = false;
  },
  hideApprovals: () => {
    ui.approvalsView.hidden = true;
  },
});

const cobros = cobrosPanel({
  token: () => session?.token,
  me: () => me,
  sessionLost: (err) => handleSessionLoss(err),
  showLogin: () => showLogin(),
});

const policy = policyPanel({ token: () => session?.token, me: () => me, sessionLost: (err) => handleSessionLoss(err) });
const counterparties = counterpartiesPanel({ token: () => session?.token, sessionLost: (err) => handleSessionLoss(err) });
const schedules = schedulesPanel({ token: () => session?.token, sessionLost: (err) => handleSessionLoss(err) });
const alerts = alertsPanel({ token: () => session?.token, sessionLost: (err) => handleSessionLoss(err) });

// ---- sections: approvals (with the batches), cobros, the approval policy, counterparties, schedules, balance alerts

type Section = 'approvals' | 'cobros' | 'policy' | 'counterparties' | 'schedules' | 'alerts';
const NAV: Record<Section, HTMLButtonElement> = {
  approvals: ui.navApprovals,
  cobros: ui.navCobros,
  policy: ui.navPolicy,
  counterparties: ui.navCounterparties,
  schedules: ui.navSchedules,
  alerts: ui.navAlerts,
};

function showSection(which: Section): void {
  for (const [section, button] of Object.entries(NAV)) {
    if (section === which) button.setAttribute('aria-current', 'page');
    else button.removeAttribute('aria-current');
  }
  batches.closeDetail();
  ui.approvalsView.hidden = which !== 'approvals';
  if (which === 'cobros') cobros.show();
  else cobros.hide();
  if (which === 'policy') policy.show();
  else policy.hide();
  if (which === 'counterparties') counterparties.show();
  else counterparties.hide();
  if (which === 'schedules') schedules.show();
  else schedules.hide();
  if (which === 'alerts') alerts.show();
  else alerts.hide();
  if (which === 'approvals') {
    void loadApprovals();
    void batches.load();
  }
}
for (const [section, button] of Object.entries(NAV)) button.addEventListener('click', () => showSection(section as Section));

// ---- session --------------------------------------------------------------------------------

function showLogin(message = '', kind: 'info' | 'success' | 'error' = 'info'): void {
  session = undefined;
  me = undefined;
  clearSession();
  if (expiryTimer) clearTimeout(expiryTimer);
  ui.boot.hidden = true;
  ui.enrolView.hidden = true;
  ui.sessionBar.hidden = true;
  ui.approvalsView.hidden = true;
  ui.nav.hidden = true;
  ui.list.replaceChildren();
  ui.more.hidden = true;
  batches.reset();
  cobros.reset();
  policy.reset();
  counterparties.reset();
  schedules.reset();
  alerts.reset();
  ui.loginView.hidden = false;
  ui.loginPassword.value = '';
  setMessage(ui.loginMessage, message, kind);
  (ui.loginEmail.value ? ui.loginPassword : ui.loginEmail).focus();
}

/** Any 401 but a wrong TOTP code means the session is gone: back to the login form with the API's message. */
function handleSessionLoss(err: unknown): boolean {
  if (err instanceof ApiError && err.sessionLost) {
    showLogin(err.message, 'error');
    return true;
  }
  return false;
}

async function enter(s: Session): Promise<void> {
  session = s;
  const profile = await api.me(s.token);
  me = profile;
  ui.companyName.textContent = profile.companyName;
  ui.userEmail.textContent = profile.email;
  ui.userRole.textContent = label(ROLE_LABEL, profile.role);
  ui.boot.hidden = true;
  ui.loginView.hidden = true;
  ui.sessionBar.hidden = false;
  ui.nav.hidden = false;
  ui.navApprovals.setAttribute('aria-current', 'page');
  for (const b of [ui.navCobros, ui.navPolicy, ui.navCounterparties, ui.navSchedules, ui.navAlerts]) b.removeAttribute('aria-current');
  cobros.hide();
  policy.hide();
  counterparties.hide();
  schedules.hide();
  alerts.hide();
  ui.approvalsView.hidden = false;
  if (expiryTimer) clearTimeout(expiryTimer);
  const left = Date.parse(s.expiresAt) - Date.now();
  expiryTimer = setTimeout(() => showLogin('Tu sesión expiró. Ingresa de nuevo.'), Math.min(Math.max(left, 0), 2 ** 31 - 1));
  await Promise.all([loadApprovals(), batches.load()]);
}

ui.loginForm.addEventListener('submit', async (ev) => {
  ev.preventDefault();
  const email = ui.loginEmail.value.trim();
  const password = ui.loginPassword.value;
  if (!email || !password) {
    setMessage(ui.loginMessage, 'Ingresa tu correo electrónico y tu contraseña.', 'error');
    return;
  }
  ui.loginSubmit.disabled = true;
  ui.loginSubmit.textContent = 'Ingresando…';
  setMessage(ui.loginMessage, '');
  try {
    const s = await api.login(email, password);
    saveSession(s);
    await enter(s);
    ui.loginPassword.value = '';
  } catch (err) {
    // showLogin also drops a half-open session (logged in, but /auth/me failed).
    ui.loginEmail.value = email;
    showLogin(err instanceof ApiError ? err.message : 'No se pudo iniciar sesión. Inténtalo de nuevo.', 'error');
  } finally {
    ui.loginSubmit.disabled = false;
    ui.loginSubmit.textContent = 'Ingresar';
  }
});

ui.logout.addEventListener('click', async () => {
  const token = session?.token;
  ui.logout.disabled = true;
  try {
    if (token) await api.logout(token);
  } catch {
    /* the session ends here anyway */
  }
  ui.logout.disabled = false;
  ui.loginEmail.value = '';
  showLogin('Cerraste sesión.');
});

// ---- the list -------------------------------------------------------------------------------

function currentFilter(): ApprovalStatus {
  return ui.filter.value as ApprovalStatus;
}

async function loadApprovals(): Promise<void> {
  if (!session) return;
  const generation = ++listGeneration;
  const status = currentFilter();
  ui.list.setAttribute('aria-busy', 'true');
  setMessage(ui.listMessage, 'Cargando aprobaciones…');
  try {
    const { items, nextCursor } = await api.approvals(session.token, status);
    if (generation !== listGeneration) return;
    ui.list.replaceChildren(...items.map((a) => approvalCard(a)));
    showMore(status, nextCursor, generation);
    setMessage(ui.listMessage, items.length === 0 ? EMPTY[status] : '');
  } catch (err) {
    if (generation !== listGeneration || handleSessionLoss(err)) return;
    ui.list.replaceChildren();
    setMessage(ui.listMessage, err instanceof ApiError ? err.message : 'No se pudieron cargar las aprobaciones.', 'error');
  } finally {
    if (generation === listGeneration) ui.list.setAttribute('aria-busy', 'false');
  }
}

/** "Cargar más" after the last card when the API says there is a next page. */
function showMore(status: ApprovalStatus, cursor: string | null | undefined, generation: number): void {
  ui.more.hidden = !cursor;
  ui.more.onclick = !cursor
    ? null
    : async () => {
        if (!session) return;
        ui.more.disabled = true;
        try {
          const page = await api.approvals(session.token, status, cursor);
          if (generation !== listGeneration) return;
          ui.list.append(...page.items.map((a) => approvalCard(a)));
          showMore(status, page.nextCursor, generation);
        } catch (err) {
          if (!handleSessionLoss(err)) setMessage(ui.listMessage, err instanceof ApiError ? err.message : 'No se pudieron cargar más aprobaciones.', 'error');
        } finally {
          ui.more.disabled = false;
        }
      };
}

ui.filter.addEventListener('change', () => void loadApprovals());
ui.refresh.addEventListener('click', () => {
  void loadApprovals();
  void batches.load();
});

// ---- one approval ---------------------------------------------------------------------------

function approvalCard(a: Approval, outcome?: Outcome): HTMLLIElement {
  const mine = !!me && a.signatures.some((s) => s.userId === me!.id);
  const headingId = `approval-${a.approvalId}-title`;

  const result = h('p', { class: 'msg', role: 'status', 'aria-live': 'polite', tabindex: '-1', 'data-testid': 'approval-result', hidden: true });
  if (outcome) setMessage(result, outcome.text, outcome.kind);

  const li = h(
    'li',
    { class: `card approval status-${a.status.toLowerCase()}`, 'data-testid': 'approval', 'data-approval-id': a.approvalId, 'aria-labelledby': headingId },
    h(
      'div',
      { class: 'approval-head' },
      h('h2', { id: headingId, class: 'amount', 'data-testid': 'approval-amount' }, formatCop(a.amount)),
      h(
        'div',
        { class: 'badges' },
        h('span', { class: 'badge badge-rail', 'data-testid': 'approval-rail' }, label(RAIL_LABEL, a.rail)),
        h('span', { class: `badge badge-${a.status.toLowerCase()}`, 'data-testid': 'approval-status' }, label(APPROVAL_STATUS_LABEL, a.status)),
      ),
    ),
    h(
      'dl',
      { class: 'details' },
      ...detail('Destinatario', a.targetName, 'approval-target-name'),
      ...detail('Documento', a.targetDocument, 'approval-target-document'),
      ...detail('Referencia', a.reference || '—', 'approval-reference'),
      ...(a.description ? detail('Descripción', a.description, 'approval-description') : []),
      ...(a.totalFee !== undefined && a.ivaAmount !== undefined
        ? detail('Comisión + IVA', `${formatCop(a.totalFee)} + ${formatCop(a.ivaAmount)}`, 'approval-fees')
        : []),
      ...detail('Creada', formatDateTime(a.createdAt), 'approval-created'),
      ...(a.status === 'PENDING' || !a.decidedAt
        ? detail('Vence', formatDateTime(a.expiresAt), 'approval-expires')
        : detail('Decidida', formatDateTime(a.decidedAt), 'approval-decided')),
      ...detail('Transferencia', label(TRANSACTION_STATUS_LABEL, a.transactionStatus), 'approval-transaction-status'),
      ...(a.approvalRoles?.length ? detail('Pueden firmar', a.approvalRoles.map((r) => label(ROLE_LABEL, r)).join(', '), 'approval-roles') : []),
      ...(a.status === 'REJECTED' && a.rejectReason ? detail('Motivo del rechazo', a.rejectReason, 'approval-reject-reason') : []),
    ),
    signaturesView(a.signatures, a.threshold, a.status === 'PENDING', 'approval'),
    a.status === 'PENDING' ? actionForm(a, mine, result) : null,
    result,
  );
  return li;
}

function actionForm(a: Approval, mine: boolean, result: HTMLElement): HTMLElement {
  if (me?.role === 'VIEWER') {
    return h('p', { class: 'muted small', 'data-testid': 'approval-readonly' }, 'Tu rol (Consulta) permite ver las aprobaciones, no firmarlas.');
  }
  const id = a.approvalId;
  return decisionForm({
    id,
    alreadySigned: mine,
    result,
    async decide(kind, code, reason) {
      if (!session) return showLogin();
      const updated = kind === 'sign' ? await api.sign(session.token, id, code) : await api.reject(session.token, id, code, reason);
      const text = decisionText(kind, updated.status, updated.signatures.length, updated.threshold, {
        rejected: 'Transferencia rechazada. No se enviará el dinero.',
        sent: 'la transferencia fue enviada.',
      });
      const fresh = approvalCard(updated, { text, kind: 'success' });
      result.closest('li')?.replaceWith(fresh);
      // The form that had focus is gone: put it on the outcome, so keyboard and screen-reader users land there.
      fresh.querySelector<HTMLElement>('[data-testid="approval-result"]')?.focus();
    },
    sessionLost: handleSessionLoss,
    // Someone else may have decided meanwhile: show the approval as it is now.
    staleCodes: ['APPROVAL_NOT_PENDING', 'APPROVAL_EXPIRED', 'APPROVAL_NOT_FOUND', 'ALREADY_SIGNED'],
    onStale: () => setMessage(ui.listMessage, 'La aprobación cambió. Pulsa «Actualizar» para ver su estado actual.'),
  });
}

// ---- self-enrolment (an invitation link) ------------------------------------------------------

const INVITATION_LINK = /^#invitation=(winv_[0-9A-Za-z]{43})$/;

/**
 * The invited user chooses a password, receives the TOTP secret and confirms a first code; only
 * then is the account active. The token is dropped from the address bar at once and kept in memory.
 */
function startEnrolment(token: string | undefined): void {
  // Another person's account: whatever session this tab held ends here.
  session = undefined;
  me = undefined;
  clearSession();
  if (expiryTimer) clearTimeout(expiryTimer);
  ui.boot.hidden = true;
  ui.sessionBar.hidden = true;
  ui.approvalsView.hidden = true;
  ui.nav.hidden = true;
  ui.list.replaceChildren();
  ui.more.hidden = true;
  batches.reset();
  cobros.reset();
  policy.reset();
  counterparties.reset();
  schedules.reset();
  alerts.reset();
  ui.loginView.hidden = true;
  ui.enrolView.hidden = false;
  ui.enrolIntro.textContent = '';
  ui.enrolPasswordForm.hidden = true;
  ui.enrolCodeForm.hidden = true;
  ui.enrolSecretBox.hidden = true;
  ui.enrolSecret.textContent = '';
  if (!token) {
    setMessage(ui.enrolMessage, 'El enlace de invitación no es válido. Pide uno nuevo al administrador.', 'error');
    return;
  }
  setMessage(ui.enrolMessage, 'Cargando la invitación…');
  let email = '';
  api.invitation(token).then(
    (inv) => {
      email = inv.email;
      ui.enrolIntro.textContent = `Invitación para ${inv.email} (${label(ROLE_LABEL, inv.role)}) · ${inv.companyName} · válida hasta el ${formatDateTime(inv.expiresAt)}`;
      if (inv.status === 'PENDING') {
        setMessage(ui.enrolMessage, '');
        ui.enrolPasswordForm.hidden = false;
        ui.enrolPassword.focus();
      } else {
        setMessage(
          ui.enrolMessage,
          'Ya elegiste tu clave. Escribe el código de tu aplicación de autenticación para activar la cuenta. Si no guardaste la clave, pide una nueva invitación al administrador.',
        );
        ui.enrolCodeForm.hidden = false;
        ui.enrolCode.focus();
      }
    },
    (err) => {
      setMessage(ui.enrolMessage, err instanceof ApiError ? err.message : 'No se pudo cargar la invitación. Inténtalo de nuevo.', 'error');
    },
  );

  ui.enrolPasswordForm.onsubmit = async (ev) => {
    ev.preventDefault();
    const password = ui.enrolPassword.value;
    if ([...password].length < 12 || [...password].length > 128) {
      setMessage(ui.enrolMessage, 'La clave debe tener entre 12 y 128 caracteres.', 'error');
      return;
    }
    if (password !== ui.enrolPasswordAgain.value) {
      setMessage(ui.enrolMessage, 'Las claves no coinciden.', 'error');
      return;
    }
    ui.enrolPasswordSubmit.disabled = true;
    try {
      const enrolment = await api.acceptInvitation(token, password);
      ui.enrolPassword.value = '';
      ui.enrolPasswordAgain.value = '';
      ui.enrolPasswordForm.hidden = true;
      ui.enrolSecret.textContent = enrolment.totpSecret.replace(/(.{4})(?=.)/g, '$1 ');
      ui.enrolOtpauth.setAttribute('href', enrolment.otpauthUrl);
      ui.enrolSecretBox.hidden = false;
      ui.enrolCodeForm.hidden = false;
      setMessage(ui.enrolMessage, '');
      ui.enrolCode.focus();
    } catch (err) {
      setMessage(ui.enrolMessage, err instanceof ApiError ? err.message : 'No se pudo guardar la clave. Inténtalo de nuevo.', 'error');
    } finally {
      ui.enrolPasswordSubmit.disabled = false;
    }
  };

  ui.enrolCodeForm.onsubmit = async (ev) => {
    ev.preventDefault();
    const code = ui.enrolCode.value.trim();
    if (!TOTP.test(code)) {
      setMessage(ui.enrolMessage, 'Ingresa el código de 6 dígitos de tu aplicación de autenticación.', 'error');
      return;
    }
    ui.enrolCodeSubmit.disabled = true;
    try {
      await api.confirmInvitation(token, code);
      ui.enrolSecret.textContent = '';
      ui.enrolOtpauth.removeAttribute('href');
      ui.loginEmail.value = email;
      showLogin('Tu cuenta está activa. Ingresa con tu correo y tu clave.', 'success');
    } catch (err) {
      ui.enrolCode.value = '';
      setMessage(ui.enrolMessage, err instanceof ApiError ? err.message : 'No se pudo activar la cuenta. Inténtalo de nuevo.', 'error');
      ui.enrolCode.focus();
    } finally {
      ui.enrolCodeSubmit.disabled = false;
    }
  };
}

// ---- start ----------------------------------------------------------------------------------

/** An invitation link in the address bar: enrol with it, and take it out of the address bar. */
function takeInvitationLink(): boolean {
  if (!location.hash.startsWith('#invitation=')) return false;
  const token = INVITATION_LINK.exec(location.hash)?.[1];
  history.replaceState(null, '', location.pathname + location.search);
  startEnrolment(token);
  return true;
}
ui.enrolToLogin.addEventListener('click', () => {
  ui.enrolSecret.textContent = '';
  ui.enrolOtpauth.removeAttribute('href');
  showLogin();
});
// A link opened in a tab that already shows the dashboard only changes the fragment.
window.addEventListener('hashchange', () => void takeInvitationLink());

const saved = loadSession();
if (takeInvitationLink()) {
  // enrolling
} else if (saved) {
  enter(saved).catch((err) => {
    if (!handleSessionLoss(err)) showLogin(err instanceof ApiError ? err.message : 'No se pudo abrir la sesión. Ingresa de nuevo.', 'error');
  });
} else {
  showLogin();
}
