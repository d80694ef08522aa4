import { AppError } from '@wallet/platform';
import { normalizeDocument } from '../domain/names.js';
import { Problems, checkText, isUuid, orNull } from './validation.js';
/**
 * The AML list (§4.5, CONTRACT §2): documents that may not take part in a send, as payer company
 * (its NIT) or as destination. Admin operations, no company scope. Adding a document already listed
 * answers the live entry; removal is a soft delete (the entry stays for audit) and is idempotent.
 */
export class AddAmlEntry {
    deps;
    constructor(deps) {
        this.deps = deps;
    }
    async execute(cmd) {
        const p = new Problems();
        const documentNumber = cmd.documentNumber.trim();
        const normalized = normalizeDocument(documentNumber);
        if (!documentNumber)
            p.add('documentNumber', 'is required');
        else if ([...documentNumber].length > 32 || normalized.length < 3)
            p.add('documentNumber', 'must be 3 to 32 characters with at least 3 letters or digits');
        checkText(p, 'name', orNull(cmd.name), { max: 200 });
        checkText(p, 'reason', orNull(cmd.reason), { max: 500, required: true });
        p.throwIfAny();
        const entry = await this.deps.store.addAmlEntry({
            id: this.deps.newId(), documentNumber, normalized, name: orNull(cmd.name)?.trim() ?? null, reason: cmd.reason.trim(),
        });
        this.deps.log.info({ amlEntryId: entry.id }, 'AML entry added');
        return entry;
    }
}
export class RemoveAmlEntry {
    deps;
    constructor(deps) {
        this.deps = deps;
    }
    async execute(cmd) {
        if (!isUuid(cmd.id))
            throw new AppError('AML_ENTRY_NOT_FOUND');
        const entry = await this.deps.store.removeAmlEntry(cmd.id.toLowerCase());
        if (!entry)
            throw new AppError('AML_ENTRY_NOT_FOUND');
        this.deps.log.info({ amlEntryId: entry.id }, 'AML entry removed');
        return entry;
    }
}
//# sourceMappingURL=aml-list.js.map