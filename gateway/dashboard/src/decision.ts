// What a transfer's approval card and a batch's detail share: the signatures so far, and the form
// that signs or rejects with a TOTP code (the API checks the role, the code and the state).
import { ApiError, type Signature } from './api.js';
import { h, setMessage } from './dom.js';
import { formatDateTime, label, ROLE_LABEL } from './format.js';

/** A TOTP code as typed: six digits. */
export const TOTP = /^\d{6}$/;

/** What a decision (or an enrolment) ended in, shown on its card. */
export interface Outcome {
  text: string;
  kind: 'success' | 'error';
}

/** "Firmas: n de t", a progress bar and who signed when. */
export function signaturesView(signatures: Signature[], threshold: number, pending: boolean, testIdPrefix: string): HTMLElement {
  const signed = signatures.length;
  return h(
    'div',
    { class: 'signatures' },
    h('p', { class: 'signature-count', 'data-testid': `${testIdPrefix}-signatures` }, `Firmas: ${signed} de ${threshold}`),
    h('progress', { max: String(threshold), value: String(Math.min(signed, threshold)), 'aria-hidden': 'true' }),
    signed === 0
      ? h('p', { class: 'muted small' }, pending ? 'Aún nadie ha firmado.' : 'Sin firmas.')
      : h(
          'ul',
          { class: 'signer-list', 'data-testid': `${testIdPrefix}-signers`, 'aria-label': 'Firmantes' },
          ...signatures.map((s) =>
            h(
              'li',
              {},
              h('span', { class: 'signer-email' }, s.email),
              h('span', { class: 'muted small' }, ` · ${label(ROLE_LABEL, s.role)} · ${formatDateTime(s.signedAt)}`),
            ),
          ),
        ),
  );
}

export interface DecisionFormOptions {
  /** Unique on the page: the inputs' ids derive from it. */
  id: string;
  /** The user already signed: only rejecting is left. */
  alreadySigned: boolean;
  /** Where the outcome or the API's message is shown. */
  result: HTMLElement;
  /** Calls the API; on success the caller replaces the view (this form included). */
  decide(kind: 'sign' | 'reject', totpCode: string, reason: string | undefined): Promise<void>;
  /** Handles a lost session (true: nothing more to do here). */
  sessionLost(err: unknown): boolean;
  /** Someone else may have decided meanwhile (the error codes that say so). */
  onStale(): void;
  staleCodes: readonly string[];
}

/** The six-digit TOTP code field every signed action asks for (the authenticator app fills it in). */
export function totpInput(id: string, testId: string, describedBy?: string): HTMLInputElement {
  return h('input', {
    id,
    name: 'totpCode',
    type: 'text',
    inputmode: 'numeric',
    autocomplete: 'one-time-code',
    pattern: '[0-9]{6}',
    maxlength: '6',
    required: true,
    placeholder: '000000',
    class: 'totp',
    'data-testid': testId,
    ...(describedBy ? { 'aria-describedby': describedBy } : {}),
  });
}

/** The TOTP code, an optional reason, «Firmar» and «Rechazar»; both ask for the code. */
export function decisionForm(o: DecisionFormOptions): HTMLFormElement {
  const { id, result } = o;
  const totp = totpInput(`totp-${id}`, 'totp-input', `totp-${id}-hint`);
  const reason = h('input', {
    id: `reason-${id}`,
    name: 'reason',
    type: 'text',
    maxlength: '500',
    'data-testid': 'reject-reason',
    placeholder: 'Ej.: destinatario incorrecto',
  });
  const sign = h('button', { type: 'submit', class: 'btn btn-primary', 'data-testid': 'sign-button', disabled: o.alreadySigned }, 'Firmar');
  const reject = h('button', { type: 'button', class: 'btn btn-danger', 'data-testid': 'reject-button' }, 'Rechazar');

  const form = h(
    'form',
    { class: 'actions', 'data-testid': 'approval-form', novalidate: true, 'aria-label': 'Firmar o rechazar' },
    h('div', { class: 'field field-totp' }, h('label', { for: `totp-${id}` }, 'Código TOTP'), totp),
    h('div', { class: 'field field-reason' }, h('label', { for: `reason-${id}` }, 'Motivo del rechazo (opcional)'), reason),
    h('div', { class: 'buttons' }, sign, reject),
    h('p', { id: `totp-${id}-hint`, class: 'muted small' }, 'El código de 6 dígitos de tu aplicación de autenticación: lo pide tanto firmar como rechazar.'),
    o.alreadySigned ? h('p', { class: 'muted small', 'data-testid': 'already-signed' }, 'Ya firmaste esta aprobación.') : null,
  );

  const run = async (kind: 'sign' | 'reject') => {
    const code = totp.value.trim();
    if (!TOTP.test(code)) {
      setMessage(result, 'Ingresa el código de 6 dígitos de tu aplicación de autenticación.', 'error');
      result.setAttribute('role', 'alert');
      totp.focus();
      return;
    }
    const buttons = [sign, reject];
    for (const b of buttons) b.disabled = true;
    const busyButton = kind === 'sign' ? sign : reject;
    busyButton.textContent = kind === 'sign' ? 'Firmando…' : 'Rechazando…';
    setMessage(result, '');
    try {
      await o.decide(kind, code, reason.value.trim() || undefined);
    } catch (err) {
      if (o.sessionLost(err)) return;
      totp.value = '';
      setMessage(result, err instanceof ApiError ? err.message : 'No se pudo completar la operación. Inténtalo de nuevo.', 'error');
      result.setAttribute('role', 'alert');
      for (const b of buttons) b.disabled = false;
      sign.disabled = o.alreadySigned;
      busyButton.textContent = kind === 'sign' ? 'Firmar' : 'Rechazar';
      totp.focus();
      if (err instanceof ApiError && o.staleCodes.includes(err.code)) o.onStale();
    }
  };
  form.addEventListener('submit', (ev) => {
    ev.preventDefault();
    void run('sign');
  });
  reject.addEventListener('click', () => void run('reject'));
  return form;
}

/** The outcome of a signature or a rejection, in Spanish; `what` names what was decided. */
export function decisionText(kind: 'sign' | 'reject', status: string, signed: number, threshold: number, what: { rejected: string; sent: string }): string {
  if (kind === 'reject') return what.rejected;
  if (status === 'APPROVED') return `Firma registrada. Se completaron las ${threshold} firmas: ${what.sent}`;
  const left = threshold - signed;
  return `Firma registrada (${signed} de ${threshold}). Falta${left === 1 ? '' : 'n'} ${left} firma${left === 1 ? '' : 's'}.`;
}
