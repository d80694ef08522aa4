// «Devolver» (docs/returns.md "From the dashboard"): a signer gives a credited payment back to its
// payer, all or part, with a reason and a TOTP code, from a cobro's payments or «Pagos sin conciliar».
// The API checks the role, the payment, what is left to return and the code; the return is the API's
// (the same saga, movement, receipt and webhooks).
import { api, ApiError, type DepositReturn, type ReturnReason } from './api.js';
import { TOTP, totpInput } from './decision.js';
import { h, setMessage } from './dom.js';
import { formatCop, label, parsePesos, RETURN_REASON_LABEL, RETURN_STATUS_LABEL } from './format.js';

export interface ReturnTarget {
  depositId: string;
  /** The payment's gross, in centavos. */
  amountCents: number;
  payer: string;
}

export interface ReturnFormDeps {
  token(): string | undefined;
  /** Any 401 but a wrong code: back to the login form (true when that happened). */
  sessionLost(err: unknown): boolean;
  showLogin(): void;
}

const REASONS: ReturnReason[] = ['CUSTOMER_REQUEST', 'DUPLICATE', 'OVERPAYMENT', 'FRAUD', 'OTHER'];
const errorText = (err: unknown, fallback: string) => (err instanceof ApiError ? err.message : fallback);

/** What of the payment is returned or being returned (the returns that did not fail). */
export function returnedSoFar(items: DepositReturn[]): bigint {
  return items.filter((r) => r.status !== 'FAILED').reduce((sum, r) => sum + BigInt(r.amountCents), 0n);
}

/** The sentence a finished request ends in, for the person who asked. */
export function returnOutcome(r: DepositReturn): string {
  const what = `Devolución de ${formatCop(r.amountCents)} al pagador`;
  if (r.status === 'RETURNED') return `${what}: ${label(RETURN_STATUS_LABEL, r.status)}. Devuelto en total del pago: ${formatCop(r.returnedAmountCents)}.`;
  if (r.status === 'PENDING') return `${what}: en proceso. El monto quedó reservado en tu billetera y la devolución termina sola.`;
  return `${what}: fallida${r.failureMessage ? ` (${r.failureMessage})` : ''}. No salió dinero de tu billetera.`;
}

/**
 * The form, put into `box`: what is left to return (read first), the amount (empty: all of it),
 * the reason, a note and the TOTP code. `done` runs after a return was made (to reload the lists).
 */
export function returnForm(deps: ReturnFormDeps, box: HTMLElement, p: ReturnTarget, done: () => void, cancelled: () => void = () => undefined): void {
  const token = deps.token();
  if (!token) return deps.showLogin();
  const result = h('p', { class: 'msg', role: 'status', 'aria-live': 'polite', tabindex: '-1', 'data-testid': 'return-result', hidden: true });
  const left = h('p', { class: 'muted small', 'data-testid': 'return-left' }, 'Consultando lo que ya se devolvió…');
  const amount = h('input', {
    id: 'return-amount',
    type: 'text',
    inputmode: 'decimal',
    maxlength: '24',
    placeholder: 'Todo lo que queda',
    'data-testid': 'return-amount',
    'aria-describedby': 'return-amount-hint',
  });
  const reason = h(
    'select',
    { id: 'return-reason', 'data-testid': 'return-reason', required: true },
    h('option', { value: '' }, 'Elige un motivo…'),
    ...REASONS.map((r) => h('option', { value: r }, label(RETURN_REASON_LABEL, r))),
  );
  const note = h('input', { id: 'return-note', type: 'text', maxlength: '140', placeholder: 'Opcional', 'data-testid': 'return-note' });
  const totp = totpInput('return-totp', 'return-totp');
  const submit = h('button', { type: 'submit', class: 'btn btn-primary', 'data-testid': 'return-submit' }, 'Devolver pago');
  const cancel = h('button', { type: 'button', class: 'btn btn-ghost', 'data-testid': 'return-cancel' }, 'Cancelar');
  const form = h(
    'form',
    {
      class: 'card actions attach-form return-form',
      'data-testid': 'return-form',
      'data-deposit-id': p.depositId,
      novalidate: true,
      'aria-labelledby': 'return-title',
    },
    h('h3', { id: 'return-title', class: 'sr-only' }, 'Devolver un pago a su pagador'),
    h('p', { class: 'attach-what', 'data-testid': 'return-what' }, `Devolver el pago de ${formatCop(p.amountCents)} · ${p.payer}`),
    left,
    h('div', { class: 'field' }, h('label', { for: 'return-amount' }, 'Monto a devolver (COP)'), amount),
    h('div', { class: 'field' }, h('label', { for: 'return-reason' }, 'Motivo'), reason),
    h('div', { class: 'field field-cobro' }, h('label', { for: 'return-note' }, 'Nota'), note),
    h('div', { class: 'field field-totp' }, h('label', { for: 'return-totp' }, 'Código TOTP'), totp),
    h('div', { class: 'buttons' }, submit, cancel),
    h(
      'p',
      { id: 'return-amount-hint', class: 'muted small' },
      'Vacío: todo lo que queda por devolver. El dinero sale de tu billetera por el medio por el que llegó (Bre-B o PSE), sin comisión; ' +
        'la comisión del pago no se reintegra. El código de 6 dígitos de tu aplicación de autenticación confirma la devolución.',
    ),
    result,
  );
  box.replaceChildren(form);
  cancel.addEventListener('click', () => {
    box.replaceChildren();
    cancelled();
  });
  form.addEventListener('submit', (ev) => {
    ev.preventDefault();
    void send();
  });
  amount.focus();
  void showLeft(token);

  async function showLeft(token: string): Promise<void> {
    try {
      const { items } = await api.depositReturns(token, p.depositId);
      const returned = returnedSoFar(items);
      const rest = BigInt(p.amountCents) - returned;
      left.textContent =
        returned === 0n
          ? `Aún no tiene devoluciones: puedes devolver hasta ${formatCop(rest)}.`
          : `Ya devuelto o en proceso: ${formatCop(returned)}. Puedes devolver hasta ${formatCop(rest > 0n ? rest : 0n)}.`;
    } catch (err) {
      if (deps.sessionLost(err)) return;
      left.textContent = 'No se pudo consultar lo que ya se devolvió de este pago.';
    }
  }

  async function send(): Promise<void> {
    const token = deps.token();
    if (!token) return deps.showLogin();
    const fail = (text: string, focus: HTMLElement) => {
      setMessage(result, text, 'error');
      result.setAttribute('role', 'alert');
      focus.focus();
    };
    const typed = amount.value.trim();
    const cents = typed ? parsePesos(typed) : undefined;
    if (typed && (cents === undefined || cents <= 0))
      return fail('Escribe el monto en pesos, por ejemplo 30.000 o 30.000,50; o déjalo vacío para devolver todo lo que queda.', amount);
    if (!reason.value) return fail('Elige el motivo de la devolución.', reason);
    const code = totp.value.trim();
    if (!TOTP.test(code)) return fail('Ingresa el código de 6 dígitos de tu aplicación de autenticación.', totp);
    submit.disabled = true;
    submit.textContent = 'Devolviendo…';
    setMessage(result, '');
    try {
      const text = note.value.trim();
      const r = await api.createReturn(token, p.depositId, {
        ...(cents !== undefined ? { amountCents: cents } : {}),
        reason: reason.value as ReturnReason,
        ...(text ? { description: text } : {}),
        totpCode: code,
      });
      const outcome = h('p', { class: 'msg', role: 'status', tabindex: '-1', 'data-testid': 'return-result', 'data-return-id': r.id });
      setMessage(outcome, returnOutcome(r), r.status === 'FAILED' ? 'error' : 'success');
      box.replaceChildren(outcome);
      outcome.focus();
      done();
    } catch (err) {
      if (deps.sessionLost(err)) return;
      totp.value = '';
      const code = err instanceof ApiError ? err.code : '';
      fail(errorText(err, 'No se pudo devolver el pago. Inténtalo de nuevo.'), code === 'RETURN_EXCEEDS_PAYMENT' ? amount : totp);
      // What is left may have changed under the signer (another return meanwhile).
      if (code === 'RETURN_EXCEEDS_PAYMENT' || code === 'INSUFFICIENT_BALANCE') void showLeft(token);
    } finally {
      submit.disabled = false;
      submit.textContent = 'Devolver pago';
    }
  }
}
