import { Secret, TOTP } from 'otpauth';
import type { Client } from './http.js';

/** The 6-digit code of an operator's authenticator, `steps` periods from now (±1 is accepted; each step once). */
export function totpCode(base32: string, steps = 0): string {
  return new TOTP({ algorithm: 'SHA1', digits: 6, period: 30, secret: Secret.fromBase32(base32) }).generate({ timestamp: Date.now() + steps * 30_000 });
}

export interface TestOperator {
  id: string;
  email: string;
  password: string;
  totpSecret: string;
  /** The session of the first login. */
  session: string;
  /** The TOTP code that first login consumed (a replay of it must fail, whatever step it is now). */
  firstCode: string;
  /** Logs in again (with the code of a later step: a step is accepted once). */
  login(steps?: number): Promise<string>;
}

let counter = 0;

/**
 * Invites (with `inviter`: the shared token, or an operator session whose request `approver`, a
 * second operator's session, approves), enrolls and logs in an operator through the real API
 * (development: the enrolment token is in the answer).
 */
export async function newOperator(api: Client, inviter: string, name = 'Operadora de Pruebas', opts: { approver?: string } = {}): Promise<TestOperator> {
  counter += 1;
  const email = `operador.${process.pid}.${counter}.${Date.now()}@billetera.co`;
  const password = `Clave-operador-${counter}-segura`;
  const asked = await api.post('/admin/operators', { token: inviter, body: { name: `${name} ${counter}`, email } });
  let invited: { id: string; enrollmentToken: string };
  if (asked.status === 201) {
    invited = { id: asked.body.id, enrollmentToken: asked.body.enrollmentToken };
  } else if (asked.status === 202 && opts.approver) {
    const approved = await api.post(`/admin/approval-requests/${asked.body.id}/approve`, { token: opts.approver });
    if (approved.status !== 200) throw new Error(`approve operator invitation: ${approved.status} ${approved.text}`);
    invited = { id: approved.body.result.operator.id, enrollmentToken: approved.body.credentials.enrollmentToken };
  } else {
    throw new Error(`invite operator: ${asked.status} ${asked.text}`);
  }
  const enrolled = await api.post('/admin/auth/enroll', { body: { enrollmentToken: invited.enrollmentToken, password } });
  if (enrolled.status !== 200) throw new Error(`enroll operator: ${enrolled.status} ${enrolled.text}`);
  const totpSecret = enrolled.body.totpSecret as string;
  let firstCode = '';
  const login = async (steps = 0) => {
    const code = totpCode(totpSecret, steps);
    const r = await api.post('/admin/auth/login', { body: { email, password, totpCode: code } });
    if (r.status !== 200) throw new Error(`operator login: ${r.status} ${r.text}`);
    firstCode ||= code;
    return r.body.token as string;
  };
  const session = await login();
  return { id: invited.id, email, password, totpSecret, session, firstCode, login };
}

/**
 * The first match of `re` in the mails the sandbox's SMTP sink received for `to` (the gateway sends
 * them right after the transaction that wrote them commits): how a test receives a credential that
 * production delivers only to its owner.
 */
export async function mailed(sandboxUrl: string, to: string, re: RegExp, timeoutMs = 20_000): Promise<RegExpExecArray> {
  const deadline = Date.now() + timeoutMs;
  for (;;) {
    const r = await fetch(`${sandboxUrl}/sandbox/emails?to=${encodeURIComponent(to)}`);
    const items = ((await r.json()) as { items: Array<{ text: string }> }).items;
    for (const m of items) {
      const hit = re.exec(m.text);
      if (hit) return hit;
    }
    if (Date.now() > deadline) throw new Error(`no mail to ${to} matching ${re}`);
    await new Promise((res) => setTimeout(res, 100));
  }
}
