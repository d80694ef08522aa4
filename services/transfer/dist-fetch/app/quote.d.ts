import { type Rail } from '../domain/rails.js';
import type { FeeBreakdown } from '../domain/transfer.js';
import type { TransferDeps } from './deps.js';
import type { WalletView } from './ports.js';
export interface QuoteCommand {
    rail: string;
    amount: bigint;
    keyValue?: string | undefined;
    keyType?: string | undefined;
    ivaApplicable: boolean;
}
export interface QuoteResult {
    amount: bigint;
    currentBalance: bigint;
    fee: FeeBreakdown;
    totalCost: bigint;
    canAfford: boolean;
    message: string | null;
}
/** The wallet of a rail, with the balance errors the gateway's balance endpoint uses. */
export declare function walletOf(wallets: WalletView[], rail: Rail): WalletView;
/**
 * POST /transfers/quote and /transfers/quote/ach (§2.3, §4.3, §4.4): the fee of the rail's
 * operation for this company (ledger fee configuration, IVA when the company is in the common
 * regime), the available balance of that rail's wallet, and whether it covers amount + fee + IVA.
 * Reserves nothing. A BREB quote's key, when given, is only checked for shape (no directory call).
 */
export declare class QuoteTransfer {
    private readonly deps;
    constructor(deps: TransferDeps);
    execute(caller: string | undefined, cmd: QuoteCommand): Promise<QuoteResult>;
}
export declare function insufficientMessage(rail: Rail, available: bigint, totalCost: bigint): string;
