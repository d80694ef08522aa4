import { Migration } from '@mikro-orm/migrations';
/**
 * Multi-signature approvals (CONTRACT §5): a send of a company with threshold ≥ 2 is accepted as
 * AWAITING_APPROVAL (funds reserved), then EXECUTING at quorum (dispatched like any send), or
 * EXPIRED / FAILED (rejected) with the funds released. The approval and its signatures are kept
 * here; the transfer row carries the approval's id, threshold and deadline for its own answers.
 */
export declare class Migration0002Approvals extends Migration {
    name: string;
    up(): void;
    down(): void;
}
