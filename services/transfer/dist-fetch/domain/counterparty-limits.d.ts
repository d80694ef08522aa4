/**
 * Counterparty limits (CONTRACT §3, §9): per company and destination document, the sum of the
 * gross amounts of non-failed outflows in the current calendar day and month in America/Bogota.
 * Reaching a limit exactly is allowed; exceeding it is refused. Daily is checked first.
 */
export interface LimitWindows {
    dayStart: Date;
    monthStart: Date;
}
/** The instants at which the current Bogota calendar day and month began. */
export declare function bogotaWindows(now: Date): LimitWindows;
export interface LimitUsage {
    daySum: bigint;
    monthSum: bigint;
}
export interface Limits {
    daily: bigint;
    monthly: bigint;
}
/** A company's own limit when set (> 0), else the service default. */
export declare function effectiveLimits(company: {
    daily: bigint;
    monthly: bigint;
}, defaults: Limits): Limits;
export type LimitVerdict = 'OK' | 'COUNTERPARTY_DAILY_LIMIT_EXCEEDED' | 'COUNTERPARTY_MONTHLY_LIMIT_EXCEEDED';
export declare function checkCounterpartyLimits(amount: bigint, usage: LimitUsage, limits: Limits): LimitVerdict;
