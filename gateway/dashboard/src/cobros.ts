// Cobros (docs/cobros.md): the company's expected payments — the list with filters, a cobro's
// detail (its QR, its Bre-B key, its PSE link, its payments and how each was matched) — and
// «Pagos sin conciliar», where a signer attaches a payment that matched no cobro to one by hand
// with a TOTP code (the API checks the role, the cobro, the payment and the code). A signer also
// gives a payment back to its payer from either list («Devolver», devoluciones.ts).
import { api, ApiError, type Cobro, type CobroPayment, type Me, type UnmatchedPayment } from './api.js';
import { TOTP, totpInput } from './decision.js';
import { returnForm, type ReturnTarget } from './devoluciones.js';
import { byId, detail, h, setMessage } from './dom.js';
import {
  COBRO_METHOD_LABEL,
  COBRO_STATUS_LABEL,
  DISPOSITION_LABEL,
  formatCop,
  formatDateTime,
  label,
  MATCHED_BY_LABEL,
  RAIL_LABEL,
  UNMATCHED_REASON_LABEL,
} from './format.js';

export interface CobrosDeps {
  token(): string | undefined;
  me(): Me | undefined;
  /** Any 401 but a wrong code: back to the login form (true when that happened). */
  sessionLost(err: unknown): boolean;
  showLogin(): void;
}

const COBRO_ID = /^cob_[a-z0-9]{24}$/;
/** The codes after which the list of unmatched payments may have changed under the signer. */
const STALE = ['DEPOSIT_NOT_FOUND', 'INVALID_STATE_TRANSITION'];

/** What a cobro asks: a fixed amount, a range, or any amount. */
export function cobroAmount(c: Cobro): string {
  if (c.amountType === 'FIXED' && c.amountCents !== null) return formatCop(c.amountCents);
  if (c.amountType === 'RANGE' && c.minAmountCents !== null && c.maxAmountCents !== null) {
    return `${formatCop(c.minAmountCents)} a ${formatCop(c.maxAmountCents)}`;
  }
  return 'Monto libre';
}
const methodsOf = (c: Cobro) => c.methods.map((m) => label(COBRO_METHOD_LABEL, m)).join(', ') || '—';
const payerOf = (p: { payerName: string | null; payerDocument: string | null }) => [p.payerName, p.payerDocument].filter(Boolean).join(' · ') || '—';
const statusBadge = (status: string, testId: string) =>
  h('span', { class: `badge badge-cobro-${status.toLowerCase()}`, 'data-testid': testId }, label(COBRO_STATUS_LABEL, status));
const errorText = (err: unknown, fallback: string) => (err instanceof ApiError ? err.message : fallback);

export function cobrosPanel(deps: CobrosDeps) {
  const ui = {
    view: byId('cobros-view'),
    filters: byId<HTMLFormElement>('cobro-filters'),
    status: byId<HTMLSelectElement>('cobro-status-filter'),
    reference: byId<HTMLInputElement>('cobro-reference-filter'),
    list: byId<HTMLTableSectionElement>('cobro-list'),
    listMessage: byId('cobro-list-message'),
    more: byId<HTMLButtonElement>('cobro-more'),
    unmatched: byId<HTMLTableSectionElement>('unmatched-list'),
    unmatchedMessage: byId('unmatched-message'),
    unmatchedMore: byId<HTMLButtonElement>('unmatched-more'),
    unmatchedReload: byId<HTMLButtonElement>('unmatched-reload'),
    attachBox: byId('attach-box'),
    detailView: byId('cobro-view'),
    back: byId<HTMLButtonElement>('cobro-back'),
    body: byId('cobro-detail'),
  };
  /** Bumped on every load, so a slow older answer never overwrites a newer one. */
  let listGeneration = 0;
  let unmatchedGeneration = 0;
  let detailGeneration = 0;
  const canAttach = () => {
    const role = deps.me()?.role;
    return role === 'ADMIN' || role === 'OPERATOR';
  };

  // ---- the list -----------------------------------------------------------------------------

  function filters() {
    const reference = ui.reference.value.trim();
    return { status: ui.status.value || undefined, reference: reference || undefined };
  }

  async function loadCobros(): Promise<void> {
    const token = deps.token();
    if (!token) return;
    const generation = ++listGeneration;
    const f = filters();
    ui.list.setAttribute('aria-busy', 'true');
    setMessage(ui.listMessage, 'Cargando cobros…');
    try {
      const page = await api.cobros(token, f);
      if (generation !== listGeneration) return;
      ui.list.replaceChildren(...page.items.map(cobroRow));
      showMore(f, page.nextCursor, generation);
      setMessage(ui.listMessage, page.items.length === 0 ? (f.status || f.reference ? 'Ningún cobro cumple el filtro.' : 'Aún no hay cobros.') : '');
    } catch (err) {
      if (generation !== listGeneration || deps.sessionLost(err)) return;
      ui.list.replaceChildren();
      ui.more.hidden = true;
      setMessage(ui.listMessage, errorText(err, 'No se pudieron cargar los cobros.'), 'error');
    } finally {
      if (generation === listGeneration) ui.list.setAttribute('aria-busy', 'false');
    }
  }

  function showMore(f: ReturnType<typeof filters>, cursor: string | null, generation: number): void {
    ui.more.hidden = !cursor;
    ui.more.onclick = !cursor
      ? null
      : async () => {
          const token = deps.token();
          if (!token) return;
          ui.more.disabled = true;
          try {
            const page = await api.cobros(token, { ...f, cursor });
            if (generation !== listGeneration) return;
            ui.list.append(...page.items.map(cobroRow));
            showMore(f, page.nextCursor, generation);
          } catch (err) {
            if (!deps.sessionLost(err)) setMessage(ui.listMessage, errorText(err, 'No se pudieron cargar más cobros.'), 'error');
          } finally {
            ui.more.disabled = false;
          }
        };
  }

  function cobroRow(c: Cobro): HTMLTableRowElement {
    return h(
      'tr',
      { 'data-testid': 'cobro-row', 'data-cobro-id': c.id },
      h('th', { scope: 'row', 'data-testid': 'cobro-reference' }, c.reference),
      h('td', {}, statusBadge(c.status, 'cobro-status')),
      h('td', { class: 'num', 'data-testid': 'cobro-amount' }, cobroAmount(c)),
      h('td', { class: 'num', 'data-testid': 'cobro-paid' }, formatCop(c.paidAmountCents)),
      h('td', { 'data-testid': 'cobro-expires' }, formatDateTime(c.expiresAt)),
      h('td', { 'data-testid': 'cobro-methods' }, methodsOf(c)),
      h('td', {}, h('button', { type: 'button', class: 'btn btn-ghost', 'data-testid': 'cobro-open', 'aria-label': `Ver el cobro ${c.reference}` }, 'Ver')),
    );
  }

  ui.list.addEventListener('click', (ev) => {
    const button = (ev.target as HTMLElement).closest('[data-testid="cobro-open"]');
    const id = button?.closest<HTMLElement>('[data-testid="cobro-row"]')?.dataset.cobroId;
    if (id) void open(id);
  });
  ui.filters.addEventListener('submit', (ev) => {
    ev.preventDefault();
    void loadCobros();
  });
  ui.status.addEventListener('change', () => void loadCobros());

  // ---- one cobro ----------------------------------------------------------------------------

  async function open(id: string): Promise<void> {
    const token = deps.token();
    if (!token) return deps.showLogin();
    const generation = ++detailGeneration;
    ui.view.hidden = true;
    ui.detailView.hidden = false;
    ui.detailView.dataset.cobroId = id;
    ui.body.replaceChildren(h('p', { class: 'muted' }, 'Cargando el cobro…'));
    try {
      const c = await api.cobro(token, id);
      if (generation === detailGeneration) render(c);
    } catch (err) {
      if (generation !== detailGeneration || deps.sessionLost(err)) return;
      const msg = h('p', { class: 'msg', role: 'alert', 'data-testid': 'cobro-detail-message' });
      setMessage(msg, errorText(err, 'No se pudo cargar el cobro.'), 'error');
      ui.body.replaceChildren(msg);
    }
  }

  function close(): void {
    ++detailGeneration;
    ui.detailView.hidden = true;
    ui.body.replaceChildren();
    ui.view.hidden = false;
    void loadCobros();
  }
  ui.back.addEventListener('click', close);

  function render(c: Cobro): void {
    const methods = h('div', { class: 'cobro-methods' });
    if (c.breb) {
      const img = h('img', { alt: `Código QR del cobro ${c.reference}`, 'data-testid': 'cobro-qr', width: '224', height: '224' });
      const qrMessage = h('p', { class: 'muted small', 'data-testid': 'cobro-qr-message' }, 'Cargando el QR…');
      const token = deps.token();
      const generation = detailGeneration;
      if (token) {
        api.cobroQr(token, c.id).then(
          (url) => {
            if (generation !== detailGeneration) return;
            img.src = url;
            qrMessage.textContent = 'Muéstralo al pagador: lo lee con la aplicación de su banco.';
          },
          (err: unknown) => {
            if (generation !== detailGeneration || deps.sessionLost(err)) return;
            setMessage(qrMessage, errorText(err, 'No se pudo cargar el QR.'), 'error');
          },
        );
      }
      methods.append(
        h('div', { class: 'card cobro-qr' }, h('h2', { class: 'small' }, 'QR Bre-B'), img, qrMessage),
        h(
          'div',
          { class: 'card' },
          h('h2', { class: 'small' }, 'Llave Bre-B'),
          h('p', { class: 'mono', 'data-testid': 'cobro-key' }, c.breb.keyValue),
          h('p', { class: 'muted small' }, 'El pagador también puede escribirla en la aplicación de su banco mientras el cobro esté abierto.'),
        ),
      );
    }
    if (c.pse) {
      const url = c.pse.paygatewayUrl;
      methods.append(
        h(
          'div',
          { class: 'card' },
          h('h2', { class: 'small' }, 'Enlace PSE'),
          /^https?:\/\//i.test(url)
            ? h('a', { href: url, target: '_blank', rel: 'noopener noreferrer', class: 'mono', 'data-testid': 'cobro-pse-link' }, url)
            : h('p', { class: 'mono', 'data-testid': 'cobro-pse-link' }, url),
        ),
      );
    }

    ui.body.replaceChildren(
      h(
        'div',
        { class: 'card cobro-detail' },
        h(
          'div',
          { class: 'approval-head' },
          h('h1', { id: 'cobro-title', 'data-testid': 'cobro-title' }, `Cobro ${c.reference}`),
          h('div', { class: 'badges' }, statusBadge(c.status, 'cobro-detail-status')),
        ),
        h(
          'dl',
          { class: 'details' },
          ...detail('Monto', cobroAmount(c), 'cobro-detail-amount'),
          ...detail('Pagado', formatCop(c.paidAmountCents), 'cobro-detail-paid'),
          ...(c.description ? detail('Descripción', c.description, 'cobro-description') : []),
          ...(c.expectedPayer
            ? detail('Pagador esperado', payerOf({ payerName: c.expectedPayer.name, payerDocument: c.expectedPayer.document }), 'cobro-expected-payer')
            : []),
          ...detail('Medios de pago', methodsOf(c), 'cobro-detail-methods'),
          ...detail('Creado', formatDateTime(c.createdAt), 'cobro-created'),
          ...detail('Vence', formatDateTime(c.expiresAt), 'cobro-detail-expires'),
          ...(c.paidAt ? detail('Pagado el', formatDateTime(c.paidAt), 'cobro-paid-at') : []),
          ...(c.closedAt ? detail('Cerrado el', formatDateTime(c.closedAt), 'cobro-closed-at') : []),
          ...detail('Id', c.id, 'cobro-id'),
          ...detail('Id de transacción (QR)', c.transactionId, 'cobro-transaction-id'),
        ),
        methods,
      ),
      paymentsSection(c.payments),
    );
    ui.body.querySelector<HTMLElement>('#cobro-title')?.focus();
  }

  function paymentsSection(payments: CobroPayment[]): HTMLElement {
    const returnBox = h('div', { 'data-testid': 'cobro-return-box' });
    const section = h(
      'section',
      { class: 'card', 'aria-labelledby': 'cobro-payments-title' },
      h('h2', { id: 'cobro-payments-title' }, 'Pagos del cobro'),
      payments.length === 0
        ? h('p', { class: 'muted', 'data-testid': 'cobro-no-payments' }, 'Aún no tiene pagos.')
        : h(
            'div',
            { class: 'table-scroll' },
            h(
              'table',
              { class: 'runs', 'data-testid': 'cobro-payments' },
              h(
                'thead',
                {},
                h(
                  'tr',
                  {},
                  ...['Recibido', 'Pagador', 'Monto', 'Neto acreditado', 'Devuelto', 'Medio', 'Conciliado', 'Tratamiento'].map((t) =>
                    h('th', { scope: 'col' }, t),
                  ),
                  h('th', { scope: 'col' }, h('span', { class: 'sr-only' }, 'Acciones')),
                ),
              ),
              h(
                'tbody',
                {},
                ...payments.map((p) =>
                  h(
                    'tr',
                    { 'data-testid': 'payment-row', 'data-deposit-id': p.depositId },
                    h('td', {}, formatDateTime(p.receivedAt)),
                    h('td', { 'data-testid': 'payment-payer' }, payerOf(p)),
                    h('td', { class: 'num', 'data-testid': 'payment-amount' }, formatCop(p.amountCents)),
                    h('td', { class: 'num' }, formatCop(p.netAmountCents)),
                    h('td', { class: 'num', 'data-testid': 'payment-returned' }, formatCop(p.returnedCents ?? 0)),
                    h('td', {}, label(RAIL_LABEL, p.source)),
                    h('td', { 'data-testid': 'payment-matched-by' }, label(MATCHED_BY_LABEL, p.matchedBy)),
                    h('td', { 'data-testid': 'payment-disposition' }, label(DISPOSITION_LABEL, p.disposition)),
                    h('td', {}, canAttach() ? returnButton(p.amountCents) : null),
                  ),
                ),
              ),
            ),
          ),
      returnBox,
    );
    section.addEventListener('click', (ev) => {
      const row = (ev.target as HTMLElement).closest('[data-testid="return-open"]')?.closest<HTMLTableRowElement>('[data-testid="payment-row"]');
      const target = row && targetOf(row, 'payment');
      if (!row || !target) return;
      select(section, row);
      returnForm(
        deps,
        returnBox,
        target,
        () => undefined,
        () => select(section),
      );
    });
    return section;
  }

  /** «Devolver» on a payment's row (signers only: the API refuses a VIEWER anyway). */
  function returnButton(amountCents: number): HTMLButtonElement {
    return h(
      'button',
      {
        type: 'button',
        class: 'btn btn-ghost',
        'data-testid': 'return-open',
        'data-amount-cents': String(amountCents),
        'aria-label': `Devolver el pago de ${formatCop(amountCents)}`,
      },
      'Devolver',
    );
  }

  /** The payment a row shows, for the return form (`prefix`: the row's test ids, payment-… or unmatched-…). */
  function targetOf(row: HTMLElement, prefix: 'payment' | 'unmatched'): ReturnTarget | undefined {
    const depositId = row.dataset.depositId;
    const amountCents = Number(row.querySelector<HTMLElement>('[data-testid="return-open"]')?.dataset.amountCents);
    if (!depositId || !Number.isSafeInteger(amountCents)) return undefined;
    return { depositId, amountCents, payer: row.querySelector(`[data-testid="${prefix}-payer"]`)?.textContent ?? '—' };
  }

  /** Marks the row being acted on (none: clears the mark). */
  function select(table: HTMLElement, row?: HTMLElement): void {
    for (const r of table.querySelectorAll('tr.selected')) r.classList.remove('selected');
    row?.classList.add('selected');
  }

  // ---- «Pagos sin conciliar» ----------------------------------------------------------------

  async function loadUnmatched(): Promise<void> {
    const token = deps.token();
    if (!token) return;
    const generation = ++unmatchedGeneration;
    ui.unmatched.setAttribute('aria-busy', 'true');
    try {
      const page = await api.unmatchedPayments(token);
      if (generation !== unmatchedGeneration) return;
      ui.unmatched.replaceChildren(...page.items.map(unmatchedRow));
      showMoreUnmatched(page.nextCursor, generation);
      if (page.items.length === 0) setMessage(ui.unmatchedMessage, 'No hay pagos sin conciliar.');
      else if (!canAttach()) setMessage(ui.unmatchedMessage, 'Tu rol (Consulta) permite ver estos pagos, no conciliarlos ni devolverlos.');
      else setMessage(ui.unmatchedMessage, '');
    } catch (err) {
      if (generation !== unmatchedGeneration || deps.sessionLost(err)) return;
      ui.unmatched.replaceChildren();
      ui.unmatchedMore.hidden = true;
      setMessage(ui.unmatchedMessage, errorText(err, 'No se pudieron cargar los pagos sin conciliar.'), 'error');
    } finally {
      if (generation === unmatchedGeneration) ui.unmatched.setAttribute('aria-busy', 'false');
    }
  }

  function showMoreUnmatched(cursor: string | null, generation: number): void {
    ui.unmatchedMore.hidden = !cursor;
    ui.unmatchedMore.onclick = !cursor
      ? null
      : async () => {
          const token = deps.token();
          if (!token) return;
          ui.unmatchedMore.disabled = true;
          try {
            const page = await api.unmatchedPayments(token, cursor);
            if (generation !== unmatchedGeneration) return;
            ui.unmatched.append(...page.items.map(unmatchedRow));
            showMoreUnmatched(page.nextCursor, generation);
          } catch (err) {
            if (!deps.sessionLost(err)) setMessage(ui.unmatchedMessage, errorText(err, 'No se pudieron cargar más pagos.'), 'error');
          } finally {
            ui.unmatchedMore.disabled = false;
          }
        };
  }

  function unmatchedRow(p: UnmatchedPayment): HTMLTableRowElement {
    return h(
      'tr',
      { 'data-testid': 'unmatched-row', 'data-deposit-id': p.depositId },
      h('td', {}, formatDateTime(p.receivedAt)),
      h('td', { 'data-testid': 'unmatched-payer' }, payerOf(p)),
      h('td', { class: 'num', 'data-testid': 'unmatched-amount' }, formatCop(p.amountCents)),
      h('td', {}, label(RAIL_LABEL, p.source)),
      h('td', { 'data-testid': 'unmatched-reason' }, label(UNMATCHED_REASON_LABEL, p.reason)),
      h(
        'td',
        {},
        canAttach()
          ? h(
              'div',
              { class: 'buttons' },
              h(
                'button',
                {
                  type: 'button',
                  class: 'btn btn-primary',
                  'data-testid': 'unmatched-attach',
                  'aria-label': `Conciliar el pago de ${formatCop(p.amountCents)}`,
                },
                'Conciliar',
              ),
              returnButton(p.amountCents),
            )
          : null,
      ),
    );
  }

  ui.unmatched.addEventListener('click', (ev) => {
    const back = (ev.target as HTMLElement).closest('[data-testid="return-open"]')?.closest<HTMLTableRowElement>('[data-testid="unmatched-row"]');
    const target = back && targetOf(back, 'unmatched');
    if (back && target) {
      select(ui.unmatched, back);
      returnForm(
        deps,
        ui.attachBox,
        target,
        () => void loadUnmatched(),
        () => select(ui.unmatched),
      );
      return;
    }
    const row = (ev.target as HTMLElement).closest('[data-testid="unmatched-attach"]')?.closest<HTMLTableRowElement>('[data-testid="unmatched-row"]');
    const id = row?.dataset.depositId;
    if (!row || !id) return;
    for (const r of ui.unmatched.querySelectorAll('tr.selected')) r.classList.remove('selected');
    row.classList.add('selected');
    const amount = row.querySelector('[data-testid="unmatched-amount"]')?.textContent ?? '';
    const payer = row.querySelector('[data-testid="unmatched-payer"]')?.textContent ?? '';
    void attachForm(id, amount, payer);
  });
  ui.unmatchedReload.addEventListener('click', () => void loadUnmatched());

  /** The signer picks an open cobro (or types its id or reference), types a TOTP code and attaches the payment. */
  async function attachForm(depositId: string, amount: string, payer: string): Promise<void> {
    const token = deps.token();
    if (!token) return deps.showLogin();
    const result = h('p', { class: 'msg', role: 'status', 'aria-live': 'polite', tabindex: '-1', 'data-testid': 'attach-result', hidden: true });
    const select = h('select', { id: 'attach-cobro', 'data-testid': 'attach-cobro-select' }, h('option', { value: '' }, 'Cargando cobros abiertos…'));
    const typed = h('input', {
      id: 'attach-cobro-text',
      type: 'text',
      maxlength: '64',
      placeholder: 'cob_… o FAC-2026-0457',
      'data-testid': 'attach-cobro-text',
      'aria-describedby': 'attach-cobro-hint',
    });
    const totp = totpInput('attach-totp', 'attach-totp');
    const submit = h('button', { type: 'submit', class: 'btn btn-primary', 'data-testid': 'attach-submit' }, 'Conciliar pago');
    const cancel = h('button', { type: 'button', class: 'btn btn-ghost', 'data-testid': 'attach-cancel' }, 'Cancelar');
    const form = h(
      'form',
      { class: 'card actions attach-form', 'data-testid': 'attach-form', 'data-deposit-id': depositId, novalidate: true, 'aria-labelledby': 'attach-title' },
      h('h3', { id: 'attach-title', class: 'sr-only' }, 'Conciliar un pago'),
      h('p', { class: 'attach-what', 'data-testid': 'attach-what' }, `Pago de ${amount} · ${payer}`),
      h('div', { class: 'field field-cobro' }, h('label', { for: 'attach-cobro' }, 'Cobro abierto'), select),
      h('div', { class: 'field field-cobro' }, h('label', { for: 'attach-cobro-text' }, 'O el id o la referencia del cobro'), typed),
      h('div', { class: 'field field-totp' }, h('label', { for: 'attach-totp' }, 'Código TOTP'), totp),
      h('div', { class: 'buttons' }, submit, cancel),
      h(
        'p',
        { id: 'attach-cobro-hint', class: 'muted small' },
        'Si escribes un id o una referencia, se usa en lugar del cobro elegido. El código de 6 dígitos de tu aplicación de autenticación confirma la conciliación.',
      ),
      result,
    );
    ui.attachBox.replaceChildren(form);
    cancel.addEventListener('click', () => {
      ui.attachBox.replaceChildren();
      for (const r of ui.unmatched.querySelectorAll('tr.selected')) r.classList.remove('selected');
    });
    form.addEventListener('submit', (ev) => {
      ev.preventDefault();
      void attach();
    });
    select.focus();

    // The open cobros to choose from (OPEN and PARTIALLY_PAID; a PAID one is reached by its id or reference).
    try {
      const [open, partly] = await Promise.all([
        api.cobros(token, { status: 'OPEN', limit: '100' }),
        api.cobros(token, { status: 'PARTIALLY_PAID', limit: '100' }),
      ]);
      const choices = [...partly.items, ...open.items];
      select.replaceChildren(
        h('option', { value: '' }, choices.length === 0 ? 'No hay cobros abiertos' : 'Elige un cobro…'),
        ...choices.map((c) =>
          h('option', { value: c.id }, `${c.reference} · ${label(COBRO_STATUS_LABEL, c.status)} · ${cobroAmount(c)} (pagado ${formatCop(c.paidAmountCents)})`),
        ),
      );
    } catch (err) {
      if (deps.sessionLost(err)) return;
      select.replaceChildren(h('option', { value: '' }, 'No se pudieron cargar los cobros'));
    }

    async function cobroIdOf(token: string): Promise<string | undefined> {
      const text = typed.value.trim();
      if (!text) return select.value || undefined;
      if (COBRO_ID.test(text)) return text;
      const page = await api.cobros(token, { reference: text });
      const found = page.items[0]?.id;
      if (!found) throw new ApiError(404, 'COBRO_NOT_FOUND', `No hay un cobro con la referencia «${text}».`);
      return found;
    }

    async function attach(): Promise<void> {
      const token = deps.token();
      if (!token) return deps.showLogin();
      const code = totp.value.trim();
      const fail = (text: string, focus: HTMLElement) => {
        setMessage(result, text, 'error');
        result.setAttribute('role', 'alert');
        focus.focus();
      };
      if (!typed.value.trim() && !select.value) return fail('Elige un cobro o escribe su id o su referencia.', select);
      if (!TOTP.test(code)) return fail('Ingresa el código de 6 dígitos de tu aplicación de autenticación.', totp);
      submit.disabled = true;
      submit.textContent = 'Conciliando…';
      setMessage(result, '');
      try {
        const cobroId = await cobroIdOf(token);
        if (!cobroId) return fail('Elige un cobro o escribe su id o su referencia.', select);
        const c = await api.attachPayment(token, cobroId, depositId, code);
        const outcome = h('p', { class: 'msg', role: 'status', tabindex: '-1', 'data-testid': 'attach-result' });
        setMessage(
          outcome,
          `Pago de ${amount} conciliado con el cobro ${c.reference}. Estado del cobro: ${label(COBRO_STATUS_LABEL, c.status)}; pagado en total: ${formatCop(c.paidAmountCents)}.`,
          'success',
        );
        ui.attachBox.replaceChildren(outcome);
        outcome.focus();
        void loadUnmatched();
        void loadCobros();
      } catch (err) {
        if (deps.sessionLost(err)) return;
        totp.value = '';
        fail(errorText(err, 'No se pudo conciliar el pago. Inténtalo de nuevo.'), err instanceof ApiError && err.code === 'COBRO_NOT_FOUND' ? typed : totp);
        // Someone may have attached it meanwhile: show the list as it is now.
        if (err instanceof ApiError && STALE.includes(err.code)) void loadUnmatched();
      } finally {
        submit.disabled = false;
        submit.textContent = 'Conciliar pago';
      }
    }
  }

  // ---- the section --------------------------------------------------------------------------

  function show(): void {
    ++detailGeneration;
    ui.detailView.hidden = true;
    ui.body.replaceChildren();
    ui.view.hidden = false;
    void loadCobros();
    void loadUnmatched();
  }

  function hide(): void {
    ++detailGeneration;
    ui.view.hidden = true;
    ui.detailView.hidden = true;
    ui.body.replaceChildren();
  }

  /** Logged out, or another account: nothing of this company stays on the page. */
  function reset(): void {
    ++listGeneration;
    ++unmatchedGeneration;
    hide();
    ui.list.replaceChildren();
    ui.unmatched.replaceChildren();
    ui.attachBox.replaceChildren();
    ui.more.hidden = true;
    ui.unmatchedMore.hidden = true;
    ui.status.value = '';
    ui.reference.value = '';
    setMessage(ui.listMessage, '');
    setMessage(ui.unmatchedMessage, '');
  }

  return { show, hide, reset };
}
