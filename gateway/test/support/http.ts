export interface Reply<T = any> {
  status: number;
  headers: Headers;
  body: T;
  text: string;
}

export interface RequestOptions {
  token?: string;
  body?: unknown;
  /** Sent as is (no JSON encoding), e.g. malformed JSON. */
  raw?: string | Buffer;
  headers?: Record<string, string>;
}

/** A small fetch client against a listening gateway. */
export function client(baseUrl: string) {
  async function call<T = any>(method: string, path: string, opts: RequestOptions = {}): Promise<Reply<T>> {
    const headers: Record<string, string> = { ...opts.headers };
    if (opts.token !== undefined) headers.authorization = `Bearer ${opts.token}`;
    let body: string | Buffer | undefined;
    if (opts.raw !== undefined) body = opts.raw;
    else if (opts.body !== undefined) {
      body = JSON.stringify(opts.body);
      headers['content-type'] ??= 'application/json';
    }
    const res = await fetch(`${baseUrl}${path}`, { method, headers, body });
    const text = await res.text();
    let parsed: unknown = text;
    if ((res.headers.get('content-type') ?? '').includes('json') && text) parsed = JSON.parse(text);
    return { status: res.status, headers: res.headers, body: parsed as T, text };
  }
  return {
    call,
    get: <T = any>(path: string, opts?: RequestOptions) => call<T>('GET', path, opts),
    post: <T = any>(path: string, opts?: RequestOptions) => call<T>('POST', path, opts),
    patch: <T = any>(path: string, opts?: RequestOptions) => call<T>('PATCH', path, opts),
    put: <T = any>(path: string, opts?: RequestOptions) => call<T>('PUT', path, opts),
    del: <T = any>(path: string, opts?: RequestOptions) => call<T>('DELETE', path, opts),
  };
}

export type Client = ReturnType<typeof client>;

let nitCounter = 0;
function nextNit(): string {
  nitCounter += 1;
  return `9${String(process.pid % 100000).padStart(5, '0')}${String(nitCounter).padStart(3, '0')}-${nitCounter % 10}`;
}

/** Operator helpers over the real /admin API. */
export function adminOf(api: Client, adminToken: string) {
  return {
    async createCompany(body: Record<string, unknown> = {}): Promise<any> {
      const r = await api.post('/admin/companies', {
        token: adminToken,
        body: { name: 'Empresa de Prueba S.A.S.', nit: nextNit(), taxRegime: 'COMMON', ...body },
      });
      if (r.status !== 201) throw new Error(`create company: ${r.status} ${r.text}`);
      return r.body;
    },
    async issueKey(companyId: string, scope: 'READ' | 'WRITE' = 'WRITE', label = 'pruebas'): Promise<any> {
      const r = await api.post(`/admin/companies/${companyId}/api-keys`, { token: adminToken, body: { scope, label } });
      if (r.status !== 201) throw new Error(`issue key: ${r.status} ${r.text}`);
      return r.body;
    },
    async credit(companyId: string, rail: 'BREB' | 'ACH', amountCents: number, reference: string): Promise<Reply> {
      return api.post(`/admin/companies/${companyId}/wallets/${rail}/credit`, { token: adminToken, body: { amountCents, reference } });
    },
    async patch(companyId: string, body: Record<string, unknown>): Promise<Reply> {
      return api.patch(`/admin/companies/${companyId}`, { token: adminToken, body });
    },
    async setFee(operation: string, body: Record<string, unknown>): Promise<Reply> {
      return api.put(`/admin/fees/${operation}`, { token: adminToken, body });
    },
  };
}

/** Error bodies must never carry internals. */
export function expectNoInternals(text: string): void {
  const patterns = [
    /\n\s+at /,
    /\bat .*:\d+:\d+/,
    /Error:/,
    /stack/i,
    /\bselect\b/i,
    /\binsert\b/i,
    /\brelation\b/i,
    /gateway\./,
    /postgres/i,
    /127\.0\.0\.1/,
    /localhost/,
    /node_modules/,
    /\.[tj]s:\d/,
  ];
  for (const re of patterns) {
    if (re.test(text)) throw new Error(`response body leaks internals (${re}): ${text}`);
  }
}
