import type { TransferDeps } from './deps.js';
import type { AmlEntry } from './ports.js';
/**
 * The AML list (§4.5, CONTRACT §2): documents that may not take part in a send, as payer company
 * (its NIT) or as destination. Admin operations, no company scope. Adding a document already listed
 * answers the live entry; removal is a soft delete (the entry stays for audit) and is idempotent.
 */
export declare class AddAmlEntry {
    private readonly deps;
    constructor(deps: TransferDeps);
    execute(cmd: {
        documentNumber: string;
        name?: string | undefined;
        reason: string;
    }): Promise<AmlEntry>;
}
export declare class RemoveAmlEntry {
    private readonly deps;
    constructor(deps: TransferDeps);
    execute(cmd: {
        id: string;
    }): Promise<AmlEntry>;
}
