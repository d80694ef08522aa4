// «Política de aprobación» (docs/policies.md): the company's approval policy as it stands — the
// version in force, the approved ones waiting for their effectiveAt, the proposal with its
// signatures — for every user; an ADMIN proposes a new policy (JSON) and signs or cancels a proposal
// with a TOTP code. The API checks the role, the document, the pending proposal and the code.
import { api, ApiError, type Me, type PolicyState, type PolicyVersion } from './api.js';
import { TOTP, totpInput } from './decision.js';
import { byId, detail, h, setMessage } from './dom.js';
import { formatDateTime, label, ROLE_LABEL } from './format.js';

export interface PolicyDeps {
  token(): string | undefined;
  me(): Me | undefined;
  /** Any 401 but a wrong code: back to the login form (true when that happened). */
  sessionLost(err: unknown): boolean;
}

const STATUS_LABEL: Record<string, string> = { PROPOSED: 'Propuesta', APPROVED: 'Aprobada', CANCELLED: 'Cancelada' };

/** The policy's Spanish error text, with the fields a 400 named. */
function errorText(err: unknown, fallback: string): string {
  if (!(err instanceof ApiError)) return fallback;
  return err.fields.length === 0 ? err.message : `${err.message} ${err.fields.map((f) => `${f.path}: ${f.message}`).join('; ')}`;
}

/** A starting point for a first proposal: every payment allowed, none named. */
const TEMPLATE = { rules: [], otherwise: { action: 'ALLOW' } };

export function policyPanel(deps: PolicyDeps) {
  const ui = {
    view: byId('policy-view'),
    reload: byId<HTMLButtonElement>('policy-reload'),
    message: byId('policy-message'),
    body: byId('policy-body'),
  };
  let generation = 0;
  const isAdmin = () => deps.me()?.role === 'ADMIN';

  function versionCard(v: PolicyVersion, kind: 'in-force' | 'scheduled' | 'proposed', state: PolicyState): HTMLElement {
    const title = kind === 'in-force' ? 'En vigor' : kind === 'scheduled' ? 'Aprobada, entra en vigor pronto' : 'Propuesta pendiente de firmas';
    const card = h(
      'article',
      { class: 'card', 'data-testid': `policy-${kind}` },
      h(
        'header',
        { class: 'card-head' },
        h('h2', {}, `${title}: versión ${v.version}`),
        h('span', { class: 'badge', 'data-testid': `policy-${kind}-status` }, label(STATUS_LABEL, v.status)),
      ),
      h(
        'dl',
        { class: 'details' },
        ...detail('Propuesta por', v.proposedBy),
        ...detail('Nota', v.note ?? '—'),
        ...detail('Propuesta el', formatDateTime(v.createdAt)),
        ...(v.effectiveAt ? detail('En vigor desde', formatDateTime(v.effectiveAt), `policy-${kind}-effective`) : []),
        ...detail('Firmas', `${v.signatures.length} de ${v.requiredSignatures}`, `policy-${kind}-signatures`),
      ),
      h(
        'ul',
        { class: 'signer-list', 'aria-label': 'Firmantes' },
        ...v.signatures.map((s) => h('li', {}, `${s.email} (${label(ROLE_LABEL, s.role)}) · ${formatDateTime(s.signedAt)}`)),
      ),
      h(
        'details',
        {},
        h('summary', {}, 'Ver la política (JSON)'),
        h('pre', { class: 'json', 'data-testid': `policy-${kind}-json` }, JSON.stringify(v.policy, null, 2)),
      ),
    );
    if (kind === 'proposed' && isAdmin()) card.append(decisionBox(v, state));
    return card;
  }

  /** Sign or cancel the proposal with a TOTP code (ADMINs only; the API checks again). */
  function decisionBox(v: PolicyVersion, state: PolicyState): HTMLElement {
    const input = totpInput(`policy-decision-code-${v.id}`, 'policy-decision-code');
    const out = h('p', { class: 'msg', role: 'status', 'aria-live': 'polite', 'data-testid': 'policy-decision-message', hidden: true });
    const signed = v.signatures.some((s) => s.email === deps.me()?.email);
    const sign = h('button', { type: 'submit', class: 'btn btn-primary', 'data-testid': 'policy-sign', disabled: signed }, 'Firmar la propuesta');
    const cancel = h('button', { type: 'button', class: 'btn btn-ghost', 'data-testid': 'policy-cancel' }, 'Cancelar la propuesta');
    const form = h(
      'form',
      { class: 'decision', novalidate: true },
      h('label', { for: input.id }, 'Código TOTP'),
      input,
      sign,
      cancel,
      out,
      h('p', { class: 'muted small' }, `Un cambio necesita ${state.changeQuorum} firmas de administradores (quien propone firma primero).`),
    );
    const act = async (what: 'sign' | 'cancel') => {
      const token = deps.token();
      const code = input.value.trim();
      if (!token) return;
      if (!TOTP.test(code)) return setMessage(out, 'Ingresa el código de 6 dígitos de tu aplicación de autenticación.', 'error');
      sign.disabled = cancel.disabled = true;
      try {
        const r = what === 'sign' ? await api.signPolicy(token, v.id, code) : await api.cancelPolicy(token, v.id, code);
        const text =
          r.status === 'APPROVED'
            ? `Política aprobada: entra en vigor el ${formatDateTime(r.effectiveAt)}.`
            : r.status === 'CANCELLED'
              ? 'Propuesta cancelada.'
              : 'Firma registrada.';
        await load();
        setMessage(ui.message, text, 'success');
      } catch (err) {
        if (deps.sessionLost(err)) return;
        setMessage(out, errorText(err, 'No se pudo registrar la decisión.'), 'error');
        sign.disabled = signed;
        cancel.disabled = false;
      }
    };
    form.addEventListener('submit', (ev) => {
      ev.preventDefault();
      void act('sign');
    });
    cancel.addEventListener('click', () => void act('cancel'));
    return form;
  }

  /** An ADMIN proposes a policy: the JSON document, a note and a TOTP code. */
  function proposeBox(state: PolicyState): HTMLElement {
    const doc = h('textarea', { id: 'policy-json', rows: '14', class: 'json', spellcheck: 'false', 'data-testid': 'policy-json' });
    doc.value = JSON.stringify(state.inForce?.policy ?? TEMPLATE, null, 2);
    const note = h('input', { id: 'policy-note', type: 'text', maxlength: '500', 'data-testid': 'policy-note' });
    const code = totpInput('policy-propose-code', 'policy-propose-code');
    const out = h('p', { class: 'msg', role: 'status', 'aria-live': 'polite', 'data-testid': 'policy-propose-message', hidden: true });
    const submit = h('button', { type: 'submit', class: 'btn btn-primary', 'data-testid': 'policy-propose-submit' }, 'Proponer');
    const form = h(
      'form',
      { class: 'card', novalidate: true, 'data-testid': 'policy-propose' },
      h('h2', {}, 'Proponer una nueva política'),
      h(
        'p',
        { class: 'muted small' },
        `Las reglas se evalúan en orden; la primera que aplica decide. Tu propuesta cuenta como tu firma; necesita ${state.changeQuorum} firmas de administradores y entra en vigor ${state.changeDelaySeconds} s después de la última.`,
      ),
      h('label', { for: doc.id }, 'Política (JSON)'),
      doc,
      h('label', { for: note.id }, 'Nota (opcional)'),
      note,
      h('label', { for: code.id }, 'Código TOTP'),
      code,
      submit,
      out,
    );
    form.addEventListener('submit', async (ev) => {
      ev.preventDefault();
      const token = deps.token();
      if (!token) return;
      let policy: unknown;
      try {
        policy = JSON.parse(doc.value);
      } catch {
        return setMessage(out, 'La política no es un JSON válido.', 'error');
      }
      if (!TOTP.test(code.value.trim())) return setMessage(out, 'Ingresa el código de 6 dígitos de tu aplicación de autenticación.', 'error');
      submit.disabled = true;
      try {
        const v = await api.proposePolicy(token, policy, code.value.trim(), note.value.trim() || undefined);
        await load();
        const left = v.requiredSignatures - v.signatures.length;
        setMessage(ui.message, `Versión ${v.version} propuesta: ${left === 1 ? 'falta 1 firma' : `faltan ${left} firmas`}.`, 'success');
      } catch (err) {
        if (deps.sessionLost(err)) return;
        setMessage(out, errorText(err, 'No se pudo proponer la política.'), 'error');
        submit.disabled = false;
      }
    });
    return form;
  }

  async function load(): Promise<void> {
    const token = deps.token();
    if (!token) return;
    const mine = ++generation;
    setMessage(ui.message, 'Cargando la política…');
    ui.body.setAttribute('aria-busy', 'true');
    try {
      const s = await api.policy(token);
      if (mine !== generation) return;
      ui.body.replaceChildren(
        s.inForce
          ? versionCard(s.inForce, 'in-force', s)
          : h('p', { class: 'muted', 'data-testid': 'policy-none' }, 'No hay una política en vigor: decide el umbral de firmas de la empresa.'),
        ...s.scheduled.map((v) => versionCard(v, 'scheduled', s)),
        s.proposed ? versionCard(s.proposed, 'proposed', s) : h('p', { class: 'muted small' }, 'No hay propuestas pendientes.'),
        ...(!s.proposed && isAdmin() ? [proposeBox(s)] : []),
      );
      setMessage(ui.message, '');
    } catch (err) {
      if (mine !== generation || deps.sessionLost(err)) return;
      ui.body.replaceChildren();
      setMessage(ui.message, errorText(err, 'No se pudo cargar la política.'), 'error');
    } finally {
      if (mine === generation) ui.body.setAttribute('aria-busy', 'false');
    }
  }

  ui.reload.addEventListener('click', () => void load());

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
      ui.body.replaceChildren();
      setMessage(ui.message, '');
    },
  };
}
