import createClient, { type Client } from 'openapi-fetch';
import type { operations, paths } from './generated/openapi.js';
import { Paginator, type Page } from './paging.js';
import { Transport, type CallOptions, type RetryEvent, type TransportOptions } from './transport.js';
import type {
  AchQuoteRequest,
  Answer,
  Balance,
  BalanceAlertEvent,
  BalanceAlertRequest,
  BalanceAlertSettings,
  Batch,
  Cobro,
  CobroRequest,
  BatchItem,
  CollectKey,
  CollectKeyQr,
  CollectKeyRequest,
  Counterparty,
  CounterpartyRequest,
  CounterpartyUpdate,
  Schedule,
  ScheduleProjection,
  ScheduleRequest,
  ScheduleRun,
  ScheduleUpdate,
  Deposit,
  Movement,
  PseDeposit,
  PseDepositRequest,
  QueryOf,
  Quote,
  QuoteRequest,
  RequestBody,
  ResolvedKey,
  ResolveKeyRequest,
  SendTransferRequest,
  SentTransfer,
  Transaction,
  UnmatchedPayment,
  WalletMove,
  WalletMoveRequest,
  WebhookDelivery,
  WebhookEndpoint,
  WebhookEndpointRequest,
  WebhookEndpointWithSecret,
} from './types.js';

export interface WalletClientOptions extends TransportOptions {
  /** The API's base URL, e.g. `https://api.example.com` (no trailing path needed). */
  baseUrl: string;
  /** A company API key (`wk_live_…` / `wk_test_…`): READ for reads, WRITE for everything. */
  apiKey: string;
  /** A fetch implementation (default: the global one), e.g. to add a proxy agent or record requests. */
  fetch?: (request: Request) => Promise<Response>;
  /** Extra headers on every request (e.g. `User-Agent` of your integration). */
  headers?: Record<string, string>;
  onRetry?: (event: RetryEvent) => void;
}

type Init = { signal: AbortSignal; headers: Record<string, string> };
type Omit2<T, K extends PropertyKey> = T extends unknown ? Omit<T, K> : never;

/** A cursor listing's query without the cursor (the iterator drives it). */
export type ListQuery<K extends keyof operations> = Omit2<QueryOf<K>, 'cursor' | 'page'>;

const bytes = (data: unknown) => new Uint8Array(data as ArrayBuffer);

/**
 * The Payments Wallet API for one company. Every method sends through the same timeouts and retries;
 * creating calls carry an Idempotency-Key (generated, or `idempotencyKey` in the call options) so a
 * retry after an unknown outcome never does the thing twice. Errors are thrown as WalletApiError
 * (the API said no), WalletTimeoutError or WalletConnectionError (no answer).
 *
 * ```ts
 * const wallet = new WalletClient({ baseUrl: process.env.WALLET_BASE_URL!, apiKey: process.env.WALLET_API_KEY! });
 * const { wallets } = await wallet.wallets.balance();
 * for await (const m of wallet.movements.list({ rail: 'BREB' })) console.log(m.id, m.amount);
 * ```
 */
export class WalletClient {
  /**
   * The underlying openapi-fetch client (typed by the document, authenticated, no retries): for an
   * operation this class does not wrap yet, or to look at raw answers.
   */
  readonly raw: Client<paths>;
  readonly wallets: Wallets;
  readonly movements: Movements;
  readonly transfers: Transfers;
  readonly batches: Batches;
  readonly deposits: Deposits;
  readonly collectKeys: CollectKeys;
  readonly cobros: Cobros;
  readonly counterparties: Counterparties;
  readonly schedules: Schedules;
  readonly approvalPolicy: ApprovalPolicy;
  readonly webhooks: Webhooks;
  readonly dictionaries: Dictionaries;

  constructor(options: WalletClientOptions) {
    if (!options?.baseUrl) throw new TypeError('WalletClient: baseUrl is required (e.g. https://api.example.com)');
    if (!/^https?:\/\//i.test(options.baseUrl)) throw new TypeError(`WalletClient: baseUrl must be an absolute http(s) URL, got ${options.baseUrl}`);
    if (!options.apiKey) throw new TypeError('WalletClient: apiKey is required');
    const userFetch = options.fetch;
    this.raw = createClient<paths>({
      baseUrl: options.baseUrl.replace(/\/+$/, ''),
      // Looked up at each request, so a fetch patched after construction (e.g. by instrumentation) is used.
      fetch: userFetch ?? ((request: Request) => globalThis.fetch(request)),
      headers: { ...options.headers, Authorization: `Bearer ${options.apiKey}` },
    });
    const ctx: Ctx = { api: this.raw, t: new Transport(options) };
    this.wallets = new Wallets(ctx);
    this.movements = new Movements(ctx);
    this.transfers = new Transfers(ctx);
    this.batches = new Batches(ctx);
    this.deposits = new Deposits(ctx);
    this.collectKeys = new CollectKeys(ctx);
    this.cobros = new Cobros(ctx);
    this.counterparties = new Counterparties(ctx);
    this.schedules = new Schedules(ctx);
    this.approvalPolicy = new ApprovalPolicy(ctx);
    this.webhooks = new Webhooks(ctx);
    this.dictionaries = new Dictionaries(ctx);
  }
}

interface Ctx {
  api: Client<paths>;
  t: Transport;
}

class Resource {
  constructor(protected readonly ctx: Ctx) {}
  protected get api() {
    return this.ctx.api;
  }
  protected get t() {
    return this.ctx.t;
  }
}

class Wallets extends Resource {
  /** Both wallets' balances (amounts in centavos as strings). */
  balance(opts?: CallOptions): Promise<Balance> {
    return this.t.run('getBalance', opts, (init: Init) => this.api.GET('/wallets/balance', init));
  }
  /** One wallet's balance at a past instant. */
  balanceAt(query: QueryOf<'getBalanceAt'>, opts?: CallOptions): Promise<Answer<'getBalanceAt'>> {
    return this.t.run('getBalanceAt', opts, (init: Init) => this.api.GET('/wallets/balance/history', { params: { query }, ...init }));
  }
  /**
   * Moves money from one of the company's wallets to the other (BREB ↔ ACH), at once and without fee
   * (docs/wallet-moves.md). Carries an Idempotency-Key (generated, or `idempotencyKey` in the options),
   * bound to the move in the ledger: a retry after a timeout or a 5xx answers that move, never a second one.
   */
  move(body: WalletMoveRequest, opts?: CallOptions): Promise<WalletMove> {
    return this.t.run('createWalletMove', opts, (init: Init) => this.api.POST('/wallets/moves', { body, ...init }));
  }
  /** Both wallets' balance alerts (docs/balance-alerts.md): settings and state, BREB then ACH. */
  alerts(opts?: CallOptions): Promise<BalanceAlertSettings[]> {
    return this.t
      .run('getWalletBalanceAlerts', opts, (init: Init) => this.api.GET('/wallets/alerts', init))
      .then((r) => (r as Answer<'getWalletBalanceAlerts'>).items);
  }
  /** Sets a wallet's balance alert (low 0 or null with no high removes it); answers it as it stands, already evaluated. */
  setAlert(rail: 'BREB' | 'ACH', body: BalanceAlertRequest, opts?: CallOptions): Promise<BalanceAlertSettings> {
    return this.t.run('setWalletBalanceAlert', opts, (init: Init) => this.api.PUT('/wallets/{rail}/alerts', { params: { path: { rail } }, body, ...init }));
  }
  /** Every balance alert raised (newest first), page by page as you iterate. */
  alertHistory(query: ListQuery<'listWalletBalanceAlertEvents'> = {}, opts?: CallOptions): Paginator<BalanceAlertEvent> {
    return new Paginator<BalanceAlertEvent>((cursor) =>
      this.t.run('listWalletBalanceAlertEvents', opts, (init: Init) =>
        this.api.GET('/wallets/alerts/history', { params: { query: { ...query, ...(cursor ? { cursor } : {}) } }, ...init }),
      ),
    );
  }
  /** One move between the company's wallets (another company's: 404 WALLET_MOVE_NOT_FOUND). */
  getMove(id: string, opts?: CallOptions): Promise<WalletMove> {
    return this.t.run('getWalletMove', opts, (init: Init) => this.api.GET('/wallets/moves/{id}', { params: { path: { id } }, ...init }));
  }
  /** An account statement as JSON. */
  statement(query: Omit<QueryOf<'getStatement'>, 'format'>, opts?: CallOptions): Promise<Answer<'getStatement'>> {
    return this.t.run('getStatement', opts, (init: Init) => this.api.GET('/wallets/statements', { params: { query: { ...query, format: 'json' } }, ...init }));
  }
  /** An account statement as a file (CSV, PDF, MT940 or ISO 20022 camt.053 XML bytes). */
  statementFile(query: Omit<QueryOf<'getStatement'>, 'format'> & { format: 'csv' | 'pdf' | 'mt940' | 'camt053' }, opts?: CallOptions): Promise<Uint8Array> {
    return this.t
      .run('getStatement', opts, (init: Init) => this.api.GET('/wallets/statements', { params: { query }, parseAs: 'arrayBuffer', ...init }))
      .then(bytes);
  }
}

class Movements extends Resource {
  /** Every movement (newest first), page by page as you iterate: `for await (const m of client.movements.list())`. */
  list(query: ListQuery<'listTransactions'> = {}, opts?: CallOptions): Paginator<Movement> {
    return new Paginator<Movement>((cursor) =>
      this.t.run('listTransactions', opts, (init: Init) =>
        this.api.GET('/wallets/transactions', { params: { query: { ...query, ...(cursor ? { cursor } : {}) } }, ...init }),
      ),
    );
  }
  get(id: string, opts?: CallOptions): Promise<Transaction> {
    return this.t.run('getTransaction', opts, (init: Init) => this.api.GET('/wallets/transactions/{id}', { params: { path: { id } }, ...init }));
  }
  /** A movement's receipt, as PDF bytes. */
  receipt(id: string, opts?: CallOptions): Promise<Uint8Array> {
    return this.t
      .run('getTransactionReceipt', opts, (init: Init) =>
        this.api.GET('/wallets/transactions/{id}/receipt.pdf', { params: { path: { id } }, parseAs: 'arrayBuffer', ...init }),
      )
      .then(bytes);
  }
}

class Transfers extends Resource {
  /** Who holds a Bre-B key (a 422 KEY_NOT_FOUND / KEY_INACTIVE / INVALID_KEY is thrown as WalletApiError). */
  resolveKey(body: ResolveKeyRequest, opts?: CallOptions): Promise<ResolvedKey> {
    return this.t.run('resolveKey', opts, (init: Init) => this.api.POST('/transfers/resolve-key', { body, ...init }));
  }
  /** Fee, IVA and total of a Bre-B send, and whether the balance covers it. */
  quote(body: QuoteRequest, opts?: CallOptions): Promise<Quote> {
    return this.t.run('quoteBreb', opts, (init: Init) => this.api.POST('/transfers/quote', { body, ...init }));
  }
  /** Fee, IVA and total of an ACH send. */
  quoteAch(body: AchQuoteRequest, opts?: CallOptions): Promise<Answer<'quoteAch'>> {
    return this.t.run('quoteAch', opts, (init: Init) => this.api.POST('/transfers/quote/ach', { body, ...init }));
  }
  /**
   * Sends money (Bre-B key or bank account). Carries an Idempotency-Key, so a retry after a timeout or
   * a 5xx answers the transfer the first attempt created instead of making a second one.
   */
  send(body: SendTransferRequest, opts?: CallOptions): Promise<SentTransfer> {
    return this.t.run('sendTransfer', opts, (init: Init) => this.api.POST('/transfers/send', { body, ...init }));
  }
  /** A transfer as a movement (status PENDING → COMPLETED / FAILED …). */
  get(id: string, opts?: CallOptions): Promise<Transaction> {
    return this.t.run('getTransaction', opts, (init: Init) => this.api.GET('/wallets/transactions/{id}', { params: { path: { id } }, ...init }));
  }
  /**
   * Polls a transfer until its status is final (COMPLETED, FAILED, REJECTED, EXPIRED, REVERSED) and
   * returns it. Prefer webhooks in production; this is for scripts and tests.
   */
  async waitUntilFinal(id: string, options: { intervalMs?: number; timeoutMs?: number; signal?: AbortSignal } = {}): Promise<Transaction> {
    const interval = options.intervalMs ?? 1000;
    const deadline = Date.now() + (options.timeoutMs ?? 120_000);
    for (;;) {
      const tx = await this.get(id, options.signal ? { signal: options.signal } : undefined);
      if (FINAL.has(String((tx as { status?: unknown }).status))) return tx;
      if (Date.now() + interval > deadline)
        throw new Error(`transfer ${id} still ${(tx as { status?: unknown }).status} after ${options.timeoutMs ?? 120_000} ms`);
      await new Promise((r) => setTimeout(r, interval));
    }
  }
}

const FINAL = new Set(['COMPLETED', 'FAILED', 'REJECTED', 'EXPIRED', 'REVERSED']);

class Batches extends Resource {
  /**
   * Creates a bulk payout from JSON items (POST /transfers/batches), or from a CSV text
   * (`{ csv, ...query }`: POST /transfers/batches/csv, the batch fields in the query). Carries an
   * Idempotency-Key.
   */
  create(body: RequestBody<'createBatch'>, opts?: CallOptions): Promise<Answer<'createBatch'>>;
  create(input: { csv: string } & QueryOf<'createBatchCsv'>, opts?: CallOptions): Promise<Answer<'createBatchCsv'>>;
  create(input: RequestBody<'createBatch'> | ({ csv: string } & QueryOf<'createBatchCsv'>), opts?: CallOptions) {
    if (input && typeof input === 'object' && 'csv' in input && typeof input.csv === 'string') {
      const { csv, ...query } = input;
      return this.t.run('createBatchCsv', opts, (init: Init) =>
        this.api.POST('/transfers/batches/csv', {
          params: { query },
          body: csv as never,
          bodySerializer: (b: unknown) => b as string,
          ...init,
          headers: { ...init.headers, 'Content-Type': 'text/csv' },
        }),
      );
    }
    return this.t.run('createBatch', opts, (init: Init) => this.api.POST('/transfers/batches', { body: input as RequestBody<'createBatch'>, ...init }));
  }
  list(query: ListQuery<'listBatches'> = {}, opts?: CallOptions): Paginator<Answer<'listBatches'>['items'][number]> {
    return new Paginator((cursor) =>
      this.t.run('listBatches', opts, (init: Init) =>
        this.api.GET('/transfers/batches', { params: { query: { ...query, ...(cursor ? { cursor } : {}) } }, ...init }),
      ),
    );
  }
  get(id: string, opts?: CallOptions): Promise<Batch> {
    return this.t.run('getBatch', opts, (init: Init) => this.api.GET('/transfers/batches/{id}', { params: { path: { id } }, ...init }));
  }
  items(id: string, query: ListQuery<'listBatchItems'> = {}, opts?: CallOptions): Paginator<BatchItem> {
    return new Paginator<BatchItem>((cursor) =>
      this.t.run('listBatchItems', opts, (init: Init) =>
        this.api.GET('/transfers/batches/{id}/items', { params: { path: { id }, query: { ...query, ...(cursor ? { cursor } : {}) } }, ...init }),
      ),
    );
  }
  execute(id: string, opts?: CallOptions): Promise<Answer<'executeBatch'>> {
    return this.t.run('executeBatch', opts, (init: Init) => this.api.POST('/transfers/batches/{id}/execute', { params: { path: { id } }, ...init }));
  }
  cancel(id: string, opts?: CallOptions): Promise<Answer<'cancelBatch'>> {
    return this.t.run('cancelBatch', opts, (init: Init) => this.api.POST('/transfers/batches/{id}/cancel', { params: { path: { id } }, ...init }));
  }
  /** The batch's results as CSV text. */
  resultsCsv(id: string, opts?: CallOptions): Promise<string> {
    return this.t.run('getBatchResultsCsv', opts, (init: Init) =>
      this.api.GET('/transfers/batches/{id}/results.csv', { params: { path: { id } }, parseAs: 'text', ...init }),
    );
  }
}

class Deposits extends Resource {
  /** A PSE payment link (`paymentUrl`) for a customer to pay into the ACH wallet. Carries an Idempotency-Key. */
  createPse(body: PseDepositRequest, opts?: CallOptions): Promise<PseDeposit> {
    return this.t.run('createPseDeposit', opts, (init: Init) => this.api.POST('/deposits/pse', { body, ...init }));
  }
  /** Every deposit (PSE and Bre-B), newest first, in the cursor style of GET /deposits. */
  list(query: ListQuery<'listDeposits'> = {}, opts?: CallOptions): Paginator<Deposit> {
    return new Paginator<Deposit>(async (cursor) => {
      // An empty cursor asks for the cursor style on the first page (`items` + `nextCursor`).
      const page = await this.t.run<Answer<'listDeposits'>>('listDeposits', opts, (init: Init) =>
        this.api.GET('/deposits', { params: { query: { ...query, cursor: cursor ?? '' } }, ...init }),
      );
      if (!('items' in page)) throw new Error('GET /deposits answered the page style to a cursor request');
      return page as Page<Deposit>;
    });
  }
  shareByEmail(id: string, body: RequestBody<'shareDepositByEmail'>, opts?: CallOptions): Promise<Answer<'shareDepositByEmail'>> {
    return this.t.run('shareDepositByEmail', opts, (init: Init) => this.api.POST('/deposits/{id}/share-email', { params: { path: { id } }, body, ...init }));
  }
  /** Assigns an unassigned Bre-B deposit to the company's wallet. Carries an Idempotency-Key. */
  assign(id: string, body: RequestBody<'assignBrebDeposit'>, opts?: CallOptions): Promise<Answer<'assignBrebDeposit'>> {
    return this.t.run('assignBrebDeposit', opts, (init: Init) => this.api.POST('/deposits/{id}/assign', { params: { path: { id } }, body, ...init }));
  }
  /** Returns an unassigned Bre-B deposit to its payer. Carries an Idempotency-Key. */
  return(id: string, body: RequestBody<'returnBrebDeposit'>, opts?: CallOptions): Promise<Answer<'returnBrebDeposit'>> {
    return this.t.run('returnBrebDeposit', opts, (init: Init) => this.api.POST('/deposits/{id}/return', { params: { path: { id } }, body, ...init }));
  }
  /**
   * Returns all or part of a credited Bre-B payment to its payer (a devolución, docs/returns.md); without
   * `amountCents`, what is left to return. Carries an Idempotency-Key.
   */
  createReturn(id: string, body: RequestBody<'createDepositReturn'>, opts?: CallOptions): Promise<Answer<'createDepositReturn'>> {
    return this.t.run('createDepositReturn', opts, (init: Init) => this.api.POST('/deposits/{id}/returns', { params: { path: { id } }, body, ...init }));
  }
  /** A payment's returns, oldest first. */
  returns(id: string, opts?: CallOptions): Promise<Answer<'listDepositReturns'>> {
    return this.t.run('listDepositReturns', opts, (init: Init) => this.api.GET('/deposits/{id}/returns', { params: { path: { id } }, ...init }));
  }
  /** A paid deposit's receipt, as PDF bytes. */
  receipt(id: string, opts?: CallOptions): Promise<Uint8Array> {
    return this.t
      .run('getDepositReceipt', opts, (init: Init) =>
        this.api.GET('/wallets/deposits/{id}/receipt.pdf', { params: { path: { id } }, parseAs: 'arrayBuffer', ...init }),
      )
      .then(bytes);
  }
}

class CollectKeys extends Resource {
  /** Registers a Bre-B collect key (`@…` alias) that credits the BREB wallet. Carries an Idempotency-Key. */
  create(body: CollectKeyRequest, opts?: CallOptions): Promise<Answer<'createCollectKey'>> {
    return this.t.run('createCollectKey', opts, (init: Init) => this.api.POST('/breb/collect-keys', { body, ...init }));
  }
  list(query: ListQuery<'listCollectKeys'> = {}, opts?: CallOptions): Paginator<CollectKey> {
    return new Paginator<CollectKey>((cursor) =>
      this.t.run('listCollectKeys', opts, (init: Init) =>
        this.api.GET('/breb/collect-keys', { params: { query: { ...query, ...(cursor ? { cursor } : {}) } }, ...init }),
      ),
    );
  }
  get(id: string, opts?: CallOptions): Promise<CollectKey> {
    return this.t.run('getCollectKey', opts, (init: Init) => this.api.GET('/breb/collect-keys/{id}', { params: { path: { id } }, ...init }));
  }
  delete(id: string, opts?: CallOptions): Promise<Answer<'deleteCollectKey'>> {
    return this.t.run('deleteCollectKey', opts, (init: Init) => this.api.DELETE('/breb/collect-keys/{id}', { params: { path: { id } }, ...init }));
  }
  /** Issues an EMVCo QR for the key (payload + image URL). Carries an Idempotency-Key. */
  issueQr(id: string, opts?: CallOptions): Promise<CollectKeyQr> {
    return this.t.run('issueCollectKeyQr', opts, (init: Init) => this.api.POST('/breb/collect-keys/{id}/qr', { params: { path: { id } }, ...init }));
  }
  /** A QR's PNG image, as bytes. */
  qrPng(qrId: string, opts?: CallOptions): Promise<Uint8Array> {
    return this.t
      .run('getCollectKeyQrPng', opts, (init: Init) =>
        this.api.GET('/breb/collect-keys/qr/{qrId}.png', { params: { path: { qrId } }, parseAs: 'arrayBuffer', ...init }),
      )
      .then(bytes);
  }
}

class Cobros extends Resource {
  /**
   * Creates a cobro (an expected payment) with its dynamic Bre-B QR and key, and a PSE link if asked
   * (docs/cobros.md). The same `reference` and request again answers the same cobro. Carries an Idempotency-Key.
   */
  create(body: CobroRequest, opts?: CallOptions): Promise<Cobro> {
    return this.t.run('createCobro', opts, (init: Init) => this.api.POST('/cobros', { body, ...init }));
  }
  /** Your cobros' matching rules: the amount tolerance (docs/cobros.md "Amount tolerance"). */
  settings(opts?: CallOptions): Promise<Answer<'getCobroSettings'>> {
    return this.t.run('getCobroSettings', opts, (init: Init) => this.api.GET('/cobros/settings', { ...init }));
  }
  /** Sets the amount tolerance for the cobros you make from now on (each keeps the tolerance it was made with). */
  setSettings(body: RequestBody<'setCobroSettings'>, opts?: CallOptions): Promise<Answer<'setCobroSettings'>> {
    return this.t.run('setCobroSettings', opts, (init: Init) => this.api.PUT('/cobros/settings', { body, ...init }));
  }
  /** Your cobros, newest first, with their payments (every page fetched as you iterate). */
  list(query: ListQuery<'listCobros'> = {}, opts?: CallOptions): Paginator<Cobro> {
    return new Paginator<Cobro>((cursor) =>
      this.t.run('listCobros', opts, (init: Init) => this.api.GET('/cobros', { params: { query: { ...query, ...(cursor ? { cursor } : {}) } }, ...init })),
    );
  }
  get(id: string, opts?: CallOptions): Promise<Cobro> {
    return this.t.run('getCobro', opts, (init: Init) => this.api.GET('/cobros/{id}', { params: { path: { id } }, ...init }));
  }
  /** Cancels an OPEN or PARTIALLY_PAID cobro (what was paid stays credited). Carries an Idempotency-Key. */
  cancel(id: string, opts?: CallOptions): Promise<Cobro> {
    return this.t.run('cancelCobro', opts, (init: Init) => this.api.POST('/cobros/{id}/cancel', { params: { path: { id } }, body: {}, ...init }));
  }
  /** The cobro's dynamic QR, as PNG bytes. */
  qrPng(id: string, opts?: CallOptions): Promise<Uint8Array> {
    return this.t
      .run('getCobroQrPng', opts, (init: Init) => this.api.GET('/cobros/{id}/qr.png', { params: { path: { id } }, parseAs: 'arrayBuffer', ...init }))
      .then(bytes);
  }
  /** Payments that matched no cobro, newest first. */
  unmatchedPayments(query: ListQuery<'listUnmatchedPayments'> = {}, opts?: CallOptions): Paginator<UnmatchedPayment> {
    return new Paginator<UnmatchedPayment>((cursor) =>
      this.t.run('listUnmatchedPayments', opts, (init: Init) =>
        this.api.GET('/cobros/unmatched-payments', { params: { query: { ...query, ...(cursor ? { cursor } : {}) } }, ...init }),
      ),
    );
  }
  /** Attaches one of your credited payments to the cobro by hand (`matchedBy: MANUAL`). Carries an Idempotency-Key. */
  attachPayment(id: string, depositId: string, opts?: CallOptions): Promise<Cobro> {
    return this.t.run('attachCobroPayment', opts, (init: Init) =>
      this.api.POST('/cobros/{id}/payments', { params: { path: { id } }, body: { depositId }, ...init }),
    );
  }
}

class Counterparties extends Resource {
  /**
   * Saves a payee (a Bre-B key with its holder, or a bank account) and starts its verification
   * (docs/counterparties.md): a key is usually decided in the answer, an account's prenote later. Carries an Idempotency-Key.
   */
  create(body: CounterpartyRequest, opts?: CallOptions): Promise<Counterparty> {
    return this.t.run('createCounterparty', opts, (init: Init) => this.api.POST('/counterparties', { body, ...init }));
  }
  /** Your counterparties, newest first, by tag, verification status or rail (every page fetched as you iterate). */
  list(query: ListQuery<'listCounterparties'> = {}, opts?: CallOptions): Paginator<Counterparty> {
    return new Paginator<Counterparty>((cursor) =>
      this.t.run('listCounterparties', opts, (init: Init) =>
        this.api.GET('/counterparties', { params: { query: { ...query, ...(cursor ? { cursor } : {}) } }, ...init }),
      ),
    );
  }
  get(id: string, opts?: CallOptions): Promise<Counterparty> {
    return this.t.run('getCounterparty', opts, (init: Init) => this.api.GET('/counterparties/{id}', { params: { path: { id } }, ...init }));
  }
  /** Changes the fields given; a new key, account or holder starts a new verification. */
  update(id: string, body: CounterpartyUpdate, opts?: CallOptions): Promise<Counterparty> {
    return this.t.run('updateCounterparty', opts, (init: Init) => this.api.PATCH('/counterparties/{id}', { params: { path: { id } }, body, ...init }));
  }
  /** Deletes it (answers it as it was). */
  delete(id: string, opts?: CallOptions): Promise<Counterparty> {
    return this.t.run('deleteCounterparty', opts, (init: Init) => this.api.DELETE('/counterparties/{id}', { params: { path: { id } }, ...init }));
  }
  /** Verifies it again (a decided one); while one is PENDING the API answers 409 COUNTERPARTY_VERIFICATION_IN_PROGRESS. */
  verify(id: string, opts?: CallOptions): Promise<Counterparty> {
    return this.t.run('verifyCounterparty', opts, (init: Init) =>
      this.api.POST('/counterparties/{id}/verify', { params: { path: { id } }, body: {}, ...init }),
    );
  }
}

class Schedules extends Resource {
  /**
   * Schedules a send, a move or a top-up, once or recurring in Bogotá time (docs/schedules.md); each run is an
   * ordinary send or move under the key `schedule:<id>:<nominal time>`. Carries an Idempotency-Key.
   */
  create(body: ScheduleRequest, opts?: CallOptions): Promise<Schedule> {
    return this.t.run('createSchedule', opts, (init: Init) => this.api.POST('/schedules', { body, ...init }));
  }
  /** Your schedules, newest first (every page fetched as you iterate). */
  list(query: ListQuery<'listSchedules'> = {}, opts?: CallOptions): Paginator<Schedule> {
    return new Paginator<Schedule>((cursor) =>
      this.t.run('listSchedules', opts, (init: Init) =>
        this.api.GET('/schedules', { params: { query: { ...query, ...(cursor ? { cursor } : {}) } }, ...init }),
      ),
    );
  }
  /** One schedule with its next runs (another company's: 404 SCHEDULE_NOT_FOUND). */
  get(id: string, opts?: CallOptions): Promise<Schedule> {
    return this.t.run('getSchedule', opts, (init: Init) => this.api.GET('/schedules/{id}', { params: { path: { id } }, ...init }));
  }
  /** Pauses or resumes it, or changes its end, number of runs, action or description. */
  update(id: string, body: ScheduleUpdate, opts?: CallOptions): Promise<Schedule> {
    return this.t.run('updateSchedule', opts, (init: Init) => this.api.PATCH('/schedules/{id}', { params: { path: { id } }, body, ...init }));
  }
  /** Cancels it: no further runs (a run already started goes on). */
  cancel(id: string, opts?: CallOptions): Promise<Schedule> {
    return this.t.run('cancelSchedule', opts, (init: Init) => this.api.DELETE('/schedules/{id}', { params: { path: { id } }, ...init }));
  }
  /** Its runs, newest first (every page fetched as you iterate): what each made, or why it failed. */
  runs(id: string, query: ListQuery<'listScheduleRuns'> = {}, opts?: CallOptions): Paginator<ScheduleRun> {
    return new Paginator<ScheduleRun>((cursor) =>
      this.t.run('listScheduleRuns', opts, (init: Init) =>
        this.api.GET('/schedules/{id}/runs', { params: { path: { id }, query: { ...query, ...(cursor ? { cursor } : {}) } }, ...init }),
      ),
    );
  }
  /** What your schedules' next runs need against your balances now (per wallet shortfall and Spanish warnings). */
  projection(query: { days?: number } = {}, opts?: CallOptions): Promise<ScheduleProjection> {
    return this.t.run('projectSchedules', opts, (init: Init) => this.api.GET('/schedules/projection', { params: { query }, ...init }));
  }
}

class ApprovalPolicy extends Resource {
  /**
   * The company's approval policy (docs/policies.md): the version in force, the ones scheduled, the
   * proposal waiting for signatures, and what a change needs. Changed only in the dashboard, by ADMINs.
   */
  get(opts?: CallOptions): Promise<Answer<'getApprovalPolicy'>> {
    return this.t.run('getApprovalPolicy', opts, (init: Init) => this.api.GET('/approval-policy', init));
  }
  /** Its versions, newest first (every page fetched as you iterate). */
  versions(query: { limit?: number } = {}, opts?: CallOptions): Paginator<Answer<'listApprovalPolicyVersions'>['items'][number]> {
    return new Paginator(async (cursor) => {
      const r = await this.t.run<Answer<'listApprovalPolicyVersions'>>('listApprovalPolicyVersions', opts, (init: Init) =>
        this.api.GET('/approval-policy/versions', { params: { query: { ...query, ...(cursor ? { beforeVersion: Number(cursor) } : {}) } }, ...init }),
      );
      return { items: r.items, nextCursor: r.nextBeforeVersion == null ? null : String(r.nextBeforeVersion) };
    });
  }
}

class WebhookEndpoints extends Resource {
  /** Registers an endpoint; the answer carries its `whsec_…` secret, shown only here. Carries an Idempotency-Key. */
  create(body: WebhookEndpointRequest, opts?: CallOptions): Promise<WebhookEndpointWithSecret> {
    return this.t.run('createWebhookEndpoint', opts, (init: Init) => this.api.POST('/webhooks/endpoints', { body, ...init }));
  }
  async list(opts?: CallOptions): Promise<WebhookEndpoint[]> {
    const r = await this.t.run<Answer<'listWebhookEndpoints'>>('listWebhookEndpoints', opts, (init: Init) => this.api.GET('/webhooks/endpoints', init));
    return r.items;
  }
  get(id: string, opts?: CallOptions): Promise<WebhookEndpoint> {
    return this.t.run('getWebhookEndpoint', opts, (init: Init) => this.api.GET('/webhooks/endpoints/{id}', { params: { path: { id } }, ...init }));
  }
  update(id: string, body: RequestBody<'updateWebhookEndpoint'>, opts?: CallOptions): Promise<Answer<'updateWebhookEndpoint'>> {
    return this.t.run('updateWebhookEndpoint', opts, (init: Init) => this.api.PATCH('/webhooks/endpoints/{id}', { params: { path: { id } }, body, ...init }));
  }
  delete(id: string, opts?: CallOptions): Promise<Answer<'deleteWebhookEndpoint'>> {
    return this.t.run('deleteWebhookEndpoint', opts, (init: Init) => this.api.DELETE('/webhooks/endpoints/{id}', { params: { path: { id } }, ...init }));
  }
  /** A new secret (shown once); the old one keeps signing for `overlapSeconds`. */
  rotateSecret(id: string, body: RequestBody<'rotateWebhookSecret'> = {}, opts?: CallOptions): Promise<Answer<'rotateWebhookSecret'>> {
    return this.t.run('rotateWebhookSecret', opts, (init: Init) =>
      this.api.POST('/webhooks/endpoints/{id}/rotate-secret', { params: { path: { id } }, body, ...init }),
    );
  }
  /** Queues a `webhook.ping` delivery to the endpoint. */
  test(id: string, opts?: CallOptions): Promise<Answer<'testWebhookEndpoint'>> {
    return this.t.run('testWebhookEndpoint', opts, (init: Init) => this.api.POST('/webhooks/endpoints/{id}/test', { params: { path: { id } }, ...init }));
  }
}

class WebhookDeliveries extends Resource {
  /** The delivery log, newest first. */
  list(query: ListQuery<'listWebhookDeliveries'> = {}, opts?: CallOptions): Paginator<WebhookDelivery> {
    return new Paginator<WebhookDelivery>((cursor) =>
      this.t.run('listWebhookDeliveries', opts, (init: Init) =>
        this.api.GET('/webhooks/deliveries', { params: { query: { ...query, ...(cursor ? { cursor } : {}) } }, ...init }),
      ),
    );
  }
  get(id: string, opts?: CallOptions): Promise<WebhookDelivery> {
    return this.t.run('getWebhookDelivery', opts, (init: Init) => this.api.GET('/webhooks/deliveries/{id}', { params: { path: { id } }, ...init }));
  }
  /** Sends the delivery's event again (same event id and body) as a new delivery. */
  replay(id: string, opts?: CallOptions): Promise<Answer<'replayWebhookDelivery'>> {
    return this.t.run('replayWebhookDelivery', opts, (init: Init) => this.api.POST('/webhooks/deliveries/{id}/replay', { params: { path: { id } }, ...init }));
  }
}

class Webhooks extends Resource {
  readonly endpoints = new WebhookEndpoints(this.ctx);
  readonly deliveries = new WebhookDeliveries(this.ctx);
}

class Dictionaries extends Resource {
  /** The ACH banks (ids for a bank-account destination). */
  achBanks(opts?: CallOptions): Promise<Answer<'listAchBanks'>> {
    return this.t.run('listAchBanks', opts, (init: Init) => this.api.GET('/dictionaries/banks/ach', init));
  }
}
