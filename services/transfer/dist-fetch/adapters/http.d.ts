/** A provider's HTTP answer, or how the call failed (for the caller to decide whether it may have landed). */
export type HttpOutcome = {
    kind: 'response';
    status: number;
    body: unknown;
} | {
    kind: 'error';
    ambiguous: boolean;
    error: string;
};
/**
 * One JSON call with a time-out (covering the body too). Network failures are classified: a refused
 * or unresolvable connection certainly did not deliver the request (`ambiguous: false`); a time-out
 * or a connection dropped mid-way may have (`ambiguous: true`). Sent with undici's `request` rather
 * than `fetch`: same pooled keep-alive connections, a fraction of the CPU per call (measured with
 * test/bench: ~120 µs against ~480 µs per call, client and server together); redirects are not followed.
 */
export declare function callJson(method: 'GET' | 'POST', url: string, body: unknown, timeoutMs: number): Promise<HttpOutcome>;
export declare function str(v: unknown): string | null;
export declare function field(body: unknown, key: string): unknown;
