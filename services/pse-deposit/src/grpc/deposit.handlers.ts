import {
  AppError,
  depositReturnHandlers,
  type AccessPolicy,
  bogotaDateOf,
  callerProfile,
  type CallContext,
  moneyExceptionToProto,
  type AsyncService,
} from '@wallet/platform';
import type { cobroV1, depositV1, settlementsV1 } from '@wallet/proto';
import type { PseLeg, PseSettlements } from '../app/settlements.js';
import type { DepositUseCases } from '../app/use-cases.js';
import { cobroToProto, type CobroUseCases } from '../app/cobros.js';
import type { CobroSettings } from '../app/cobro-ports.js';
import { depositToProto } from '../app/proto-views.js';

/**
 * A second guard behind the gateway's (which refuses first): what changes a cobro is done by a WRITE
 * API key or a dashboard ADMIN / OPERATOR, never a READ key or a VIEWER, whatever called us.
 */
function requireWriter(ctx: CallContext): void {
  const p = ctx.principal;
  if (p?.kind === 'apikey' && p.scope !== 'WRITE') throw new AppError('INSUFFICIENT_SCOPE');
  if (p?.kind === 'user' && p.role !== 'ADMIN' && p.role !== 'OPERATOR') throw new AppError('INSUFFICIENT_ROLE');
}

/** The company's name and tax regime: from the signed caller context only, never from the request. */
const company = (ctx: CallContext) => {
  const p = callerProfile(ctx);
  return { name: p.name, ivaApplicable: p.ivaApplicable };
};

/**
 * The DepositService RPCs: decode, call one use case, encode. The company and its profile (name,
 * tax regime) always come from the signed caller context (ctx.companyId, ctx.principal).
 * Statuses are shown as of `now` (a link past expiresAt is EXPIRED). ListExceptions /
 * ResolveException are operator calls across companies (the gateway's /admin/exceptions).
 */
export function depositHandlers(
  uc: DepositUseCases,
  settlements: PseSettlements,
  now: () => Date = () => new Date(),
  cobros?: CobroUseCases,
): AsyncService<depositV1.DepositServiceServer> {
  const co = (): CobroUseCases => {
    if (!cobros) throw new AppError('SERVICE_UNAVAILABLE', 'Los cobros no están habilitados en este proceso.');
    return cobros;
  };
  return {
    async createCobro(req, ctx) {
      const r = await co().create.execute(
        ctx.companyId,
        {
          reference: req.reference,
          amountCents: req.amountCents,
          minAmountCents: req.minAmountCents,
          maxAmountCents: req.maxAmountCents,
          expiresAt: req.expiresAt,
          description: req.description,
          expectedPayer: req.expectedPayer,
          metadata: req.metadata,
          methods: req.methods,
          overpaymentPolicy: req.overpaymentPolicy,
          psePayer: req.psePayer,
        },
        company(ctx),
      );
      return { ...cobroToProto(r.cobro), created: r.created };
    },

    async listCobros(req, ctx) {
      const r = await co().list.execute(ctx.companyId, {
        status: req.status,
        reference: req.reference,
        createdFrom: req.createdFrom,
        createdTo: req.createdTo,
        limit: req.limit,
        cursor: req.cursor,
      });
      return { items: r.items.map(cobroToProto), ...(r.nextCursor ? { nextCursor: r.nextCursor } : {}) };
    },

    async getCobro(req, ctx) {
      return cobroToProto(await co().get.execute(ctx.companyId, req.id));
    },

    async cancelCobro(req, ctx) {
      requireWriter(ctx);
      return cobroToProto(await co().cancel.execute(ctx.companyId, req.id));
    },

    async attachCobroPayment(req, ctx) {
      requireWriter(ctx);
      return cobroToProto(await co().attach.execute(ctx.companyId, req.cobroId, req.depositId));
    },

    async getCobroSettings(_req, ctx) {
      return settingsToProto(await co().getSettings.execute(ctx.companyId));
    },

    async setCobroSettings(req, ctx) {
      requireWriter(ctx);
      return settingsToProto(
        await co().setSettings.execute(ctx.companyId, { amountToleranceCents: req.amountToleranceCents, amountToleranceBps: req.amountToleranceBps }),
      );
    },

    async listUnmatchedPayments(req, ctx) {
      const r = await co().unmatched.execute(ctx.companyId, { limit: req.limit, cursor: req.cursor });
      return {
        items: r.items.map((u) => ({
          depositId: u.depositId,
          ...(u.cobroId ? { cobroId: u.cobroId } : {}),
          reason: u.reason,
          source: u.source,
          amountCents: u.amount,
          ...(u.payerName ? { payerName: u.payerName } : {}),
          ...(u.payerDocument ? { payerDocument: u.payerDocument } : {}),
          receivedAt: u.receivedAt,
          listedAt: u.createdAt,
        })),
        ...(r.nextCursor ? { nextCursor: r.nextCursor } : {}),
      };
    },

    async getCobroQrPng(req, ctx) {
      return { png: await co().qrPng.execute(ctx.companyId, req.id) };
    },

    async *listSettlements(req) {
      for await (const batch of settlements.list(req.rail, req.date, req.batchSize)) yield { records: batch.map(legToProto) };
    },

    async findSettlements(req) {
      return { records: (await settlements.find(req.rail, req.ids)).map(legToProto) };
    },

    async createPseDeposit(req, ctx) {
      const d = await uc.createPse.execute(ctx.companyId, ctx.apiKeyId, {
        amountCents: req.amountCents,
        payerDocumentTypeId: req.payerDocumentTypeId,
        payerDocumentNumber: req.payerDocumentNumber,
        payerFirstName: req.payerFirstName,
        payerLastName: req.payerLastName,
        payerEmail: req.payerEmail,
        payerPhone: req.payerPhone,
        internalRef: req.internalRef,
        company: company(ctx),
      });
      return depositToProto(d, now());
    },

    async shareByEmail(req, ctx) {
      return uc.shareByEmail.execute(ctx.companyId, {
        depositId: req.depositId,
        recipientEmail: req.recipientEmail,
        recipientName: req.recipientName,
        customMessage: req.customMessage,
        company: company(ctx),
      });
    },

    async listDeposits(req, ctx) {
      const r = await uc.list.execute(ctx.companyId, {
        status: req.status,
        rail: req.rail,
        externalId: req.externalId,
        brebKeyId: req.brebKeyId,
        page: req.page,
        limit: req.limit,
        cursorMode: req.cursorMode,
        cursor: req.cursor,
      });
      return {
        deposits: r.deposits.map((d) => depositToProto(d, r.at)),
        total: r.total,
        page: r.page,
        limit: r.limit,
        totalPages: r.totalPages,
        ...(r.nextCursor ? { nextCursor: r.nextCursor } : {}),
      };
    },

    async getDeposit(req, ctx) {
      const d = await uc.get.execute(ctx.companyId, req.id);
      return depositToProto(d, now());
    },

    ...depositReturnHandlers({ create: uc.createDepositReturn, list: uc.listDepositReturns }, 'PSE'),

    async handlePseCallback(req) {
      return uc.handlePseCallback.execute({ rawBody: Buffer.from(req.rawBody), signature: req.signature });
    },

    async listExceptions(req) {
      const r = await uc.listExceptions.execute(req);
      return { items: r.items.map(moneyExceptionToProto), ...(r.nextCursor ? { nextCursor: r.nextCursor } : {}) };
    },

    async resolveException(req) {
      return moneyExceptionToProto(await uc.resolveException.execute({ id: req.id, action: req.action, note: req.note, resolvedBy: req.resolvedBy }));
    },
  };
}

/** Who may call each RPC: the gateway only (every method serves an API client, a dashboard user, an operator or a provider callback it authenticated). */
function legToProto(r: PseLeg): settlementsV1.Settlement {
  return {
    ourId: r.ourId,
    status: r.status,
    direction: r.direction,
    amountCents: r.amountCents,
    companyId: r.companyId,
    ...(r.providerId !== null ? { providerId: r.providerId } : {}),
    ...(r.settledAt !== null ? { settledAt: r.settledAt.toISOString(), valueDate: bogotaDateOf(r.settledAt) } : {}),
    ...(r.openExceptionId ? { openExceptionId: r.openExceptionId } : {}),
    ...(r.stepOwed ? { stepOwed: true } : {}),
    ...(r.traceparent ? { traceparent: r.traceparent } : {}),
  };
}

export const depositAccess: AccessPolicy<AsyncService<depositV1.DepositServiceServer>> = {
  // The reconciliation: a service-level read across companies (a bare mesh identity: no company principal; the gateway is refused).
  listSettlements: ['reconciliation'],
  findSettlements: ['reconciliation'],
  createPseDeposit: ['gateway'],
  shareByEmail: ['gateway'],
  listDeposits: ['gateway'],
  getDeposit: ['gateway'],
  handlePseCallback: ['gateway:callback'],
  // refunds of paid PSE deposits (docs/returns.md): the company's own, or an operator's
  createDepositReturn: ['gateway', 'gateway:admin'],
  listDepositReturns: ['gateway', 'gateway:admin'],
  listExceptions: ['gateway:admin'],
  resolveException: ['gateway:admin'],
  createCobro: ['gateway'],
  listCobros: ['gateway'],
  getCobro: ['gateway'],
  cancelCobro: ['gateway'],
  getCobroQrPng: ['gateway'],
  attachCobroPayment: ['gateway'],
  listUnmatchedPayments: ['gateway'],
  getCobroSettings: ['gateway'],
  setCobroSettings: ['gateway'],
};

/** A company's cobro settings on the wire. */
function settingsToProto(s: CobroSettings): cobroV1.CobroSettings {
  return { amountToleranceCents: s.tolerance.cents, amountToleranceBps: s.tolerance.bps, ...(s.updatedAt ? { updatedAt: s.updatedAt } : {}) };
}
