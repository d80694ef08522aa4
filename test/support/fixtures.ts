import { instantFromDate, type Instant } from '@wallet/platform';

/** The request pieces every suite shares (the sandbox's ACH account, a PSE payer): one copy, in the platform's testing module. */
export { SANDBOX_ACH_ACCOUNT, PSE_PAYER } from '@wallet/platform/testing';

/**
 * An instant strictly between what happened before the call and what happens after it (10 ms either
 * side): a statement or balance bound that puts earlier postings on one side and later ones on the other.
 */
export async function instantMark(): Promise<Instant> {
  const sleep = (ms: number) => new Promise((r) => setTimeout(r, ms));
  await sleep(10);
  const t = instantFromDate(new Date());
  await sleep(10);
  return t;
}
