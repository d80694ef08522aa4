const NOT_SENT = new Set(['ECONNREFUSED', 'ENOTFOUND', 'EAI_AGAIN', 'EHOSTUNREACH', 'ENETUNREACH', 'UND_ERR_CONNECT_TIMEOUT']);
/**
 * One JSON call with a time-out. Network failures are classified: a refused or unresolvable
 * connection certainly did not deliver the request (`ambiguous: false`); a time-out or a connection
 * dropped mid-way may have (`ambiguous: true`).
 */
export async function callJson(method, url, body, timeoutMs) {
    try {
        const res = await fetch(url, {
            method,
            headers: body === undefined ? { accept: 'application/json' } : { 'content-type': 'application/json', accept: 'application/json' },
            ...(body === undefined ? {} : { body: JSON.stringify(body) }),
            signal: AbortSignal.timeout(timeoutMs),
        });
        const text = await res.text();
        let parsed = null;
        if (text) {
            try {
                parsed = JSON.parse(text);
            }
            catch {
                parsed = { raw: text.slice(0, 200) };
            }
        }
        return { kind: 'response', status: res.status, body: parsed };
    }
    catch (err) {
        const e = err;
        const code = e.cause?.code;
        if (e.name === 'TimeoutError' || e.name === 'AbortError')
            return { kind: 'error', ambiguous: true, error: 'timeout' };
        return { kind: 'error', ambiguous: !(code && NOT_SENT.has(code)), error: code ?? e.message ?? 'network error' };
    }
}
export function str(v) {
    return typeof v === 'string' && v.length > 0 ? v : null;
}
export function field(body, key) {
    return body && typeof body === 'object' ? body[key] : undefined;
}
