/**
 * Counterparty limits (CONTRACT §3, §9): per company and destination document, the sum of the
 * gross amounts of non-failed outflows in the current calendar day and month in America/Bogota.
 * Reaching a limit exactly is allowed; exceeding it is refused. Daily is checked first.
 */
/** Colombia has kept UTC−05:00 all year since 1993 (no daylight saving time). */
const BOGOTA_OFFSET_MS = -5 * 60 * 60 * 1000;
/** The instants at which the current Bogota calendar day and month began. */
export function bogotaWindows(now) {
    const local = new Date(now.getTime() + BOGOTA_OFFSET_MS); // its UTC fields read as Bogota wall time
    const y = local.getUTCFullYear();
    const m = local.getUTCMonth();
    const d = local.getUTCDate();
    return {
        dayStart: new Date(Date.UTC(y, m, d) - BOGOTA_OFFSET_MS),
        monthStart: new Date(Date.UTC(y, m, 1) - BOGOTA_OFFSET_MS),
    };
}
/** A company's own limit when set (> 0), else the service default. */
export function effectiveLimits(company, defaults) {
    return {
        daily: company.daily > 0n ? company.daily : defaults.daily,
        monthly: company.monthly > 0n ? company.monthly : defaults.monthly,
    };
}
export function checkCounterpartyLimits(amount, usage, limits) {
    if (usage.daySum + amount > limits.daily)
        return 'COUNTERPARTY_DAILY_LIMIT_EXCEEDED';
    if (usage.monthSum + amount > limits.monthly)
        return 'COUNTERPARTY_MONTHLY_LIMIT_EXCEEDED';
    return 'OK';
}
//# sourceMappingURL=counterparty-limits.js.map