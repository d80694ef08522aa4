// Names for the generated types (./generated/openapi.ts, openapi-typescript): every request and answer
// type of the SDK is derived from the document here, never copied by hand, so regenerating after an API
// change retypes the whole client.
import type { components, operations } from './generated/openapi.js';

export type { components, operations, paths } from './generated/openapi.js';
export type { OperationId, WalletErrorCode } from './generated/operations.js';

type Ops = operations;
type JsonOf<R> = R extends { content: { 'application/json': infer B } } ? B : never;

/** The JSON body an operation takes. */
export type RequestBody<K extends keyof Ops> = Ops[K] extends { requestBody?: infer RB } ? JsonOf<NonNullable<RB>> : never;

/** An operation's query parameters (all of them optional or required as the document says). */
export type QueryOf<K extends keyof Ops> = Ops[K] extends { parameters: { query?: infer Q } } ? NonNullable<Q> : never;

/** The JSON answer of an operation on success (the union when it has several 2xx answers). */
export type Answer<K extends keyof Ops> = {
  [S in keyof Ops[K]['responses']]: S extends 200 | 201 | 202 ? JsonOf<Ops[K]['responses'][S]> : never;
}[keyof Ops[K]['responses']];

/** The error bodies an operation documents (`{ error, message, details? }` with its codes). */
export type ErrorAnswer<K extends keyof Ops> = {
  [S in keyof Ops[K]['responses']]: S extends 200 | 201 | 202 ? never : JsonOf<Ops[K]['responses'][S]>;
}[keyof Ops[K]['responses']];

/** The error codes one operation documents. */
export type ErrorCodeOf<K extends keyof Ops> = ErrorAnswer<K> extends infer E ? (E extends { error?: infer C } ? Extract<C, string> : never) : never;

type Schemas = components['schemas'];
/** The document's named schemas, e.g. `Schema<'Movement'>`. */
export type Schema<N extends keyof Schemas> = Schemas[N];

/** Items of a cursor listing. */
type ItemOf<P> = P extends { items: (infer T)[] } ? T : never;

export type Balance = Answer<'getBalance'>;
export type Movement = ItemOf<Answer<'listTransactions'>>;
export type Transaction = Answer<'getTransaction'>;
export type WalletMoveRequest = RequestBody<'createWalletMove'>;
export type WalletMove = Answer<'getWalletMove'>;
export type BalanceAlertRequest = RequestBody<'setWalletBalanceAlert'>;
export type BalanceAlertSettings = Answer<'setWalletBalanceAlert'>;
export type BalanceAlertEvent = Answer<'listWalletBalanceAlertEvents'>['items'][number];
export type ResolveKeyRequest = RequestBody<'resolveKey'>;
export type ResolvedKey = Answer<'resolveKey'>;
export type QuoteRequest = RequestBody<'quoteBreb'>;
export type AchQuoteRequest = RequestBody<'quoteAch'>;
export type Quote = Answer<'quoteBreb'>;
export type SendTransferRequest = RequestBody<'sendTransfer'>;
export type SentTransfer = Answer<'sendTransfer'>;
export type Batch = Answer<'getBatch'>;
export type BatchItem = ItemOf<Answer<'listBatchItems'>>;
export type PseDepositRequest = RequestBody<'createPseDeposit'>;
export type PseDeposit = Answer<'createPseDeposit'>;
export type Deposit = ItemOf<Extract<Answer<'listDeposits'>, { items: unknown }>>;
export type CollectKeyRequest = RequestBody<'createCollectKey'>;
export type CollectKey = Answer<'getCollectKey'>;
export type CollectKeyQr = Answer<'issueCollectKeyQr'>;
export type CobroRequest = RequestBody<'createCobro'>;
export type Cobro = Answer<'getCobro'>;
export type UnmatchedPayment = Answer<'listUnmatchedPayments'>['items'][number];
export type CounterpartyRequest = RequestBody<'createCounterparty'>;
export type CounterpartyUpdate = RequestBody<'updateCounterparty'>;
export type Counterparty = Answer<'getCounterparty'>;
export type ScheduleRequest = RequestBody<'createSchedule'>;
export type ScheduleUpdate = RequestBody<'updateSchedule'>;
export type Schedule = Answer<'getSchedule'>;
export type ScheduleRun = Answer<'listScheduleRuns'>['items'][number];
export type ScheduleProjection = Answer<'projectSchedules'>;
export type WebhookEndpointRequest = RequestBody<'createWebhookEndpoint'>;
export type WebhookEndpointWithSecret = Answer<'createWebhookEndpoint'>;
export type WebhookEndpoint = Answer<'getWebhookEndpoint'>;
export type WebhookDelivery = Answer<'getWebhookDelivery'>;
