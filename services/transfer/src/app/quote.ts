import { AppError, formatCop, invalidRequest } from '@wallet/platform';
import { thresholdDecision, type PolicyDecision } from '../domain/approval-policy.js';
import { counterpartyOf } from './counterparty-lookup.js';
import { checkKey } from '../domain/keys.js';
import { CAP_ERROR, MAX_JSON_CENTS, MIN_AMOUNT, RAIL_CAPS, type Rail } from '../domain/rails.js';
import type { FeeBreakdown } from '../domain/transfer.js';
import type { TransferDeps } from './deps.js';
import type { WalletView } from './ports.js';
import { Problems, requireCompany } from './validation.js';

export interface QuoteCommand {
  rail: string;
  amount: bigint;
  keyValue?: string | undefined;
  keyType?: string | undefined;
  ivaApplicable: boolean;
  /** The company's multi-signature threshold (what decides without a policy). */
  multiSigThreshold?: number;
  counterpartyId?: string | undefined;
}

export interface QuoteResult {
  amount: bigint;
  currentBalance: bigint;
  fee: FeeBreakdown;
  totalCost: bigint;
  canAfford: boolean;
  message: string | null;
  /** What the approval policy in force would decide (docs/policies.md "Quotes explain"). */
  policy: PolicyDecision;
}

/** The wallet of a rail, with the balance errors the gateway's balance endpoint uses. */
export function walletOf(wallets: WalletView[], rail: Rail): WalletView {
  const w = wallets.find((x) => x.rail === rail);
  if (w) return w;
  if (wallets.length === 0) throw new AppError('WALLET_NOT_PROVISIONED');
  if (rail === 'BREB') throw new AppError('FAST_WALLET_MISSING');
  throw new AppError('WALLET_NOT_PROVISIONED', 'La empresa no tiene billetera ACH aprovisionada.');
}

/**
 * POST /transfers/quote and /transfers/quote/ach (§2.3, §4.3, §4.4): the fee of the rail's
 * operation for this company (ledger fee configuration, IVA when the company is in the common
 * regime), the available balance of that rail's wallet, and whether it covers amount + fee + IVA.
 * Reserves nothing. A BREB quote's key, when given, is only checked for shape (no directory call).
 */
export class QuoteTransfer {
  constructor(private readonly deps: TransferDeps) {}

  async execute(caller: string | undefined, cmd: QuoteCommand): Promise<QuoteResult> {
    const companyId = requireCompany(caller);
    const p = new Problems();
    if (cmd.rail !== 'BREB' && cmd.rail !== 'ACH') p.add('rail', 'must be BREB or ACH');
    if (cmd.amount < MIN_AMOUNT) p.add('amount', `must be at least ${MIN_AMOUNT}`);
    else if (cmd.amount > MAX_JSON_CENTS) p.add('amount', `must be at most ${MAX_JSON_CENTS}`);
    let keyProblem: string | null = null;
    if (cmd.rail === 'BREB' && cmd.keyValue) {
      const k = checkKey(cmd.keyValue, cmd.keyType);
      if (!k.ok && k.problem === 'LENGTH') p.add('keyValue', 'must be 3 to 64 characters');
      else if (!k.ok && k.problem === 'TYPE') p.add('keyType', 'must be one of AUTO, PHONE, EMAIL, ALPHANUM, NRIC');
      else if (!k.ok && k.problem === 'INVALID_KEY') keyProblem = k.reason;
    } else if (cmd.rail === 'BREB' && cmd.keyType && !['AUTO', 'PHONE', 'EMAIL', 'ALPHANUM', 'NRIC'].includes(cmd.keyType)) {
      p.add('keyType', 'must be one of AUTO, PHONE, EMAIL, ALPHANUM, NRIC');
    }
    if (!p.empty) p.throwIfAny();
    const rail = cmd.rail as Rail;
    if (cmd.amount > RAIL_CAPS[rail]) throw new AppError(CAP_ERROR[rail]);
    if (keyProblem) throw new AppError('INVALID_KEY', keyProblem);

    const [fee, wallets, policy] = await Promise.all([
      this.deps.ledger.computeFees(companyId, rail, cmd.amount, cmd.ivaApplicable),
      this.deps.ledger.balances(companyId, cmd.ivaApplicable),
      this.explain(companyId, rail, cmd),
    ]);
    const wallet = walletOf(wallets, rail);
    const totalCost = cmd.amount + fee.totalCharged;
    const canAfford = wallet.availableCents >= totalCost;
    return {
      amount: cmd.amount,
      currentBalance: wallet.availableCents,
      fee,
      totalCost,
      canAfford,
      message: canAfford ? null : insufficientMessage(rail, wallet.availableCents, totalCost),
      policy,
    };
  }

  /** The policy's decision for the quoted payment: to the counterparty named (another company's: COUNTERPARTY_NOT_FOUND), or to the key given. */
  private async explain(companyId: string, rail: Rail, cmd: QuoteCommand): Promise<PolicyDecision> {
    const { deps } = this;
    const threshold = cmd.multiSigThreshold ?? 0;
    let counterparty: { verified: boolean; tags: readonly string[] } | null = null;
    let fingerprint: string | null = null;
    if (cmd.counterpartyId) {
      const c = await counterpartyOf(deps, companyId, cmd.counterpartyId);
      if (c.rail !== rail) throw invalidRequest([{ path: 'counterpartyId', message: `Es una contraparte ${c.rail}; cotice con ese riel.` }]);
      counterparty = { verified: c.status === 'VERIFIED', tags: c.tags };
      const d = c.destination;
      fingerprint = deps.destinationFingerprint(d.kind === 'ACH' ? { kind: 'ACH', bankAchCode: d.bankAchCode, accountNumber: d.accountNumber } : d);
    } else if (rail === 'BREB' && cmd.keyValue) {
      fingerprint = deps.destinationFingerprint({ kind: 'BREB', keyValue: cmd.keyValue });
    }
    const p = { companyId, multiSigThreshold: threshold, amount: cmd.amount, rail, counterparty, destinationFingerprint: fingerprint, at: deps.now() };
    return deps.policies ? deps.policies.explain(p) : thresholdDecision(threshold);
  }
}

export function insufficientMessage(rail: Rail, available: bigint, totalCost: bigint): string {
  return (
    `Saldo insuficiente: la billetera ${rail} tiene ${formatCop(available)} disponibles y la transferencia cuesta ${formatCop(totalCost)} ` +
    `(monto más comisión e IVA); faltan ${formatCop(totalCost - available)}.`
  );
}
