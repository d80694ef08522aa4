// Bulk payouts awaiting the company's signatures (docs/batches.md, "Multi-signature"): the list
// «Lotes por aprobar», and a batch's detail (totals, its lines page by page) where a signer signs
// or rejects the whole batch with a TOTP code, as a single transfer's approval.
import { api, ApiError, type Batch, type BatchItem, type Me } from './api.js';
import { decisionForm, decisionText, signaturesView, type Outcome } from './decision.js';
import { byId, detail, h, setMessage } from './dom.js';
import { APPROVAL_STATUS_LABEL, BATCH_ITEM_STATUS_LABEL, BATCH_STATUS_LABEL, formatCop, formatDateTime, label, RAIL_LABEL } from './format.js';

const ITEMS_PAGE = 20;
const STALE = ['APPROVAL_NOT_PENDING', 'APPROVAL_EXPIRED', 'BATCH_NOT_FOUND', 'ALREADY_SIGNED'] as const;

export interface BatchesDeps {
  token(): string | undefined;
  me(): Me | undefined;
  /** Any 401 but a wrong code: back to the login form (true when that happened). */
  sessionLost(err: unknown): boolean;
  showLogin(): void;
  /** The approvals view (with the list of batches) and a batch's detail take turns on the page. */
  showApprovals(): void;
  hideApprovals(): void;
}

const sumCents = (xs: Array<number | string>) => xs.reduce<bigint>((a, x) => a + BigInt(x), 0n);
const batchName = (b: Batch) => b.reference || 'Lote sin referencia';
const lineCount = (b: Batch) => (b.validCount < b.itemCount ? `${b.itemCount} (${b.validCount} por pagar)` : String(b.itemCount));

export function batchesPanel(deps: BatchesDeps) {
  const ui = {
    list: byId<HTMLUListElement>('batch-list'),
    listMessage: byId('batch-list-message'),
    more: byId<HTMLButtonElement>('batch-more'),
    reload: byId<HTMLButtonElement>('batches-reload'),
    view: byId('batch-view'),
    back: byId<HTMLButtonElement>('batch-back'),
    body: byId('batch-detail'),
  };
  /** Bumped on every load, so a slow older answer never overwrites a newer one. */
  let listGeneration = 0;
  let detailGeneration = 0;

  // ---- «Lotes por aprobar» ------------------------------------------------------------------

  async function load(): Promise<void> {
    const token = deps.token();
    if (!token) return;
    const generation = ++listGeneration;
    ui.list.setAttribute('aria-busy', 'true');
    setMessage(ui.listMessage, 'Cargando lotes…');
    try {
      const page = await api.batches(token, 'AWAITING_APPROVAL');
      if (generation !== listGeneration) return;
      ui.list.replaceChildren(...page.items.map(batchCard));
      showMore(page.nextCursor, generation);
      setMessage(ui.listMessage, page.items.length === 0 ? 'No hay lotes pendientes de aprobación.' : '');
    } catch (err) {
      if (generation !== listGeneration || deps.sessionLost(err)) return;
      ui.list.replaceChildren();
      setMessage(ui.listMessage, err instanceof ApiError ? err.message : 'No se pudieron cargar los lotes.', 'error');
    } finally {
      if (generation === listGeneration) ui.list.setAttribute('aria-busy', 'false');
    }
  }

  function showMore(cursor: string | null, generation: number): void {
    ui.more.hidden = !cursor;
    ui.more.onclick = !cursor
      ? null
      : async () => {
          const token = deps.token();
          if (!token) return;
          ui.more.disabled = true;
          try {
            const page = await api.batches(token, 'AWAITING_APPROVAL', cursor);
            if (generation !== listGeneration) return;
            ui.list.append(...page.items.map(batchCard));
            showMore(page.nextCursor, generation);
          } catch (err) {
            if (!deps.sessionLost(err)) setMessage(ui.listMessage, err instanceof ApiError ? err.message : 'No se pudieron cargar más lotes.', 'error');
          } finally {
            ui.more.disabled = false;
          }
        };
  }

  function batchCard(b: Batch): HTMLLIElement {
    const headingId = `batch-${b.id}-title`;
    const signed = b.approval?.signatures.length ?? 0;
    const threshold = b.approval?.threshold ?? b.threshold;
    return h(
      'li',
      { class: 'card batch', 'data-testid': 'batch', 'data-batch-id': b.id, 'aria-labelledby': headingId },
      h(
        'div',
        { class: 'approval-head' },
        h('h3', { id: headingId, class: 'batch-name', 'data-testid': 'batch-reference' }, batchName(b)),
        h('span', { class: 'badge badge-pending', 'data-testid': 'batch-status' }, label(BATCH_STATUS_LABEL, b.status)),
      ),
      h(
        'dl',
        { class: 'details' },
        ...detail('Pagos', lineCount(b), 'batch-count'),
        ...b.totals.flatMap((t) => detail(`Total ${label(RAIL_LABEL, t.rail)}`, formatCop(t.total), `batch-total-${t.rail}`)),
        ...detail('Firmas', `${signed} de ${threshold}`, 'batch-signatures'),
        ...detail('Vence', formatDateTime(b.approval?.expiresAt), 'batch-expires'),
      ),
      h('button', { type: 'button', class: 'btn btn-primary', 'data-testid': 'batch-open', 'aria-describedby': headingId }, 'Ver lote'),
    );
  }

  ui.list.addEventListener('click', (ev) => {
    const button = (ev.target as HTMLElement).closest('[data-testid="batch-open"]');
    const id = button?.closest<HTMLElement>('[data-testid="batch"]')?.dataset.batchId;
    if (id) void open(id);
  });
  ui.reload.addEventListener('click', () => void load());

  // ---- one batch ----------------------------------------------------------------------------

  async function open(batchId: string): Promise<void> {
    const token = deps.token();
    if (!token) return deps.showLogin();
    const generation = ++detailGeneration;
    deps.hideApprovals();
    ui.view.hidden = false;
    ui.view.dataset.batchId = batchId;
    ui.body.replaceChildren(h('p', { class: 'muted' }, 'Cargando el lote…'));
    try {
      const b = await api.batch(token, batchId);
      if (generation === detailGeneration) render(b);
    } catch (err) {
      if (generation !== detailGeneration || deps.sessionLost(err)) return;
      const msg = h('p', { class: 'msg', role: 'alert', 'data-testid': 'batch-result' });
      setMessage(msg, err instanceof ApiError ? err.message : 'No se pudo cargar el lote.', 'error');
      ui.body.replaceChildren(msg);
    }
  }

  function close(): void {
    ++detailGeneration;
    ui.view.hidden = true;
    ui.body.replaceChildren();
    deps.showApprovals();
    void load();
  }
  ui.back.addEventListener('click', close);

  function render(b: Batch, outcome?: Outcome): void {
    const a = b.approval;
    const me = deps.me();
    const mine = !!me && !!a && a.signatures.some((s) => s.userId === me.id);
    const pending = a?.status === 'PENDING';
    const result = h('p', { class: 'msg', role: 'status', 'aria-live': 'polite', tabindex: '-1', 'data-testid': 'batch-result', hidden: true });
    if (outcome) setMessage(result, outcome.text, outcome.kind);

    const totals = h(
      'table',
      { class: 'runs totals', 'data-testid': 'batch-totals' },
      h('caption', { class: 'sr-only' }, 'Totales por billetera'),
      h('thead', {}, h('tr', {}, ...['Billetera', 'Pagos', 'Monto', 'Comisión', 'IVA', 'Total'].map((t) => h('th', { scope: 'col' }, t)))),
      h(
        'tbody',
        {},
        ...b.totals.map((t) =>
          h(
            'tr',
            { 'data-testid': 'batch-total-row', 'data-rail': t.rail },
            h('th', { scope: 'row' }, label(RAIL_LABEL, t.rail)),
            h('td', { class: 'num', 'data-testid': 'total-count' }, String(t.count)),
            h('td', { class: 'num' }, formatCop(t.amount)),
            h('td', { class: 'num' }, formatCop(t.totalFee)),
            h('td', { class: 'num' }, formatCop(t.ivaAmount)),
            h('td', { class: 'num', 'data-testid': 'total-total' }, formatCop(t.total)),
          ),
        ),
      ),
    );

    const items = itemsTable(b);
    ui.body.replaceChildren(
      h(
        'div',
        { class: 'card batch-detail' },
        h(
          'div',
          { class: 'approval-head' },
          h('h1', { id: 'batch-title', 'data-testid': 'batch-title' }, `Lote ${batchName(b)}`),
          h(
            'div',
            { class: 'badges' },
            h('span', { class: 'badge', 'data-testid': 'batch-detail-status' }, label(BATCH_STATUS_LABEL, b.status)),
            a
              ? h('span', { class: `badge badge-${a.status.toLowerCase()}`, 'data-testid': 'batch-approval-status' }, label(APPROVAL_STATUS_LABEL, a.status))
              : null,
          ),
        ),
        h(
          'dl',
          { class: 'details' },
          ...(b.description ? detail('Descripción', b.description, 'batch-description') : []),
          ...detail('Pagos', lineCount(b), 'batch-detail-count'),
          ...detail('Total a debitar', formatCop(sumCents(b.totals.map((t) => t.total))), 'batch-detail-total'),
          ...detail('Creado', formatDateTime(b.createdAt), 'batch-created'),
          ...(a && (a.status === 'PENDING' || !a.decidedAt)
            ? detail('Vence', formatDateTime(a.expiresAt), 'batch-detail-expires')
            : a
              ? detail('Decidido', formatDateTime(a.decidedAt), 'batch-decided')
              : []),
          ...(a?.status === 'REJECTED' && a.rejectReason ? detail('Motivo del rechazo', a.rejectReason, 'batch-reject-reason') : []),
        ),
        totals,
        a ? signaturesView(a.signatures, a.threshold, pending, 'batch-detail') : null,
        pending ? actions(b, mine, result) : null,
        result,
      ),
      items.section,
    );
    void items.go(0);
    if (outcome) result.focus();
  }

  function actions(b: Batch, mine: boolean, result: HTMLElement): HTMLElement {
    if (deps.me()?.role === 'VIEWER') {
      return h('p', { class: 'muted small', 'data-testid': 'batch-readonly' }, 'Tu rol (Consulta) permite ver los lotes, no firmarlos.');
    }
    return decisionForm({
      id: `batch-${b.id}`,
      alreadySigned: mine,
      result,
      async decide(kind, code, reason) {
        const token = deps.token();
        if (!token) return deps.showLogin();
        const updated = kind === 'sign' ? await api.signBatch(token, b.id, code) : await api.rejectBatch(token, b.id, code, reason);
        const u = updated.approval;
        const text = decisionText(kind, u?.status ?? '', u?.signatures.length ?? 0, u?.threshold ?? updated.threshold, {
          rejected: 'Lote rechazado. No se enviará ningún pago y los fondos quedan liberados.',
          sent: 'los pagos del lote se están enviando.',
        });
        render(updated, { text, kind: 'success' });
      },
      sessionLost: deps.sessionLost,
      staleCodes: STALE,
      onStale: () => setMessage(result, `${result.textContent ?? ''} El lote cambió: vuelve a abrirlo para ver su estado actual.`.trim(), 'error'),
    });
  }

  /** The batch's lines, a page at a time (cursor pages: the cursors seen are kept to go back). */
  function itemsTable(b: Batch) {
    const cursors: Array<string | undefined> = [undefined];
    const body = h('tbody', {});
    const message = h('p', { class: 'msg', role: 'status', 'data-testid': 'items-message', hidden: true });
    const prev = h('button', { type: 'button', class: 'btn btn-ghost', 'data-testid': 'items-prev', disabled: true }, 'Anterior');
    const next = h('button', { type: 'button', class: 'btn btn-ghost', 'data-testid': 'items-next', disabled: true }, 'Siguiente');
    const pageLabel = h('span', { class: 'muted small', 'data-testid': 'items-page' }, '');
    let index = 0;
    const go = async (i: number) => {
      const token = deps.token();
      if (!token) return;
      const generation = detailGeneration;
      prev.disabled = true;
      next.disabled = true;
      try {
        const page = await api.batchItems(token, b.id, ITEMS_PAGE, cursors[i]);
        if (generation !== detailGeneration) return;
        index = i;
        if (page.nextCursor) cursors[i + 1] = page.nextCursor;
        body.replaceChildren(...page.items.map(itemRow));
        setMessage(message, page.items.length === 0 ? 'El lote no tiene pagos.' : '');
        pageLabel.textContent = `Página ${i + 1}`;
        prev.disabled = i === 0;
        next.disabled = !page.nextCursor;
      } catch (err) {
        if (generation !== detailGeneration || deps.sessionLost(err)) return;
        setMessage(message, err instanceof ApiError ? err.message : 'No se pudieron cargar los pagos del lote.', 'error');
        prev.disabled = index === 0;
        next.disabled = cursors[index + 1] === undefined;
      }
    };
    prev.addEventListener('click', () => void go(index - 1));
    next.addEventListener('click', () => void go(index + 1));
    const section = h(
      'section',
      { class: 'card batch-items', 'aria-labelledby': 'batch-items-title' },
      h('h2', { id: 'batch-items-title' }, 'Pagos del lote'),
      h(
        'table',
        { class: 'runs', 'data-testid': 'batch-items' },
        h('thead', {}, h('tr', {}, ...['Línea', 'Destinatario', 'Destino', 'Monto', 'Estado'].map((t) => h('th', { scope: 'col' }, t)))),
        body,
      ),
      message,
      h('div', { class: 'pager' }, prev, pageLabel, next),
    );
    return { section, go };
  }

  function itemRow(i: BatchItem): HTMLTableRowElement {
    return h(
      'tr',
      { 'data-testid': 'batch-item-row', 'data-item': String(i.item) },
      h('td', { class: 'num', 'data-testid': 'item-line' }, String(i.line ?? i.item)),
      h('td', { 'data-testid': 'item-recipient' }, i.targetName || '—'),
      h('td', { 'data-testid': 'item-destination' }, `${i.rail ? `${label(RAIL_LABEL, i.rail)} · ` : ''}${i.destination}`),
      h('td', { class: 'num', 'data-testid': 'item-amount' }, formatCop(i.amount)),
      h('td', { 'data-testid': 'item-status' }, label(BATCH_ITEM_STATUS_LABEL, i.status)),
    );
  }

  /** Logged out, or another account: nothing of this company stays on the page. */
  function reset(): void {
    ++listGeneration;
    ++detailGeneration;
    ui.list.replaceChildren();
    ui.more.hidden = true;
    setMessage(ui.listMessage, '');
    ui.view.hidden = true;
    ui.body.replaceChildren();
  }

  /** Another section of the page is shown: a batch's detail closes (the list stays). */
  function closeDetail(): void {
    ++detailGeneration;
    ui.view.hidden = true;
    ui.body.replaceChildren();
  }

  return { load, reset, closeDetail };
}
