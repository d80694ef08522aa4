import { AppError } from '@wallet/platform';
import { type KeyType } from '../domain/keys.js';
import type { TransferDeps } from './deps.js';
import type { RecipientView } from './ports.js';
export type ResolveKeyResult = {
    found: true;
    anchorHandle: string;
    keyType: KeyType;
    keyValue: string;
    recipient: RecipientView;
} | {
    found: false;
    errorCode: 'KEY_NOT_FOUND' | 'KEY_INACTIVE' | 'INVALID_KEY';
    message: string;
};
export declare const RESOLVE_MESSAGES: {
    readonly KEY_NOT_FOUND: "La llave Bre-B no está registrada en el directorio.";
    readonly KEY_INACTIVE: "La llave Bre-B existe pero no está activa.";
    readonly INVALID_KEY: "La llave Bre-B no tiene un formato válido.";
};
/**
 * POST /transfers/resolve-key (§4.2, CONTRACT §9): checks the key's length and form, asks the
 * directory, and answers the holder. A found key is remembered 10 minutes per (company, anchor
 * handle) so a send may use `target_anchor_handle` instead of the key. Nothing is cached for the
 * answer itself: every call asks the directory.
 */
export declare class ResolveKey {
    private readonly deps;
    constructor(deps: TransferDeps);
    execute(caller: string | undefined, req: {
        keyValue: string;
        keyType: string;
    }): Promise<ResolveKeyResult>;
}
/** The directory verdict of a send (the same lookup, as errors): INVALID_KEY, KEY_INACTIVE or the entry. */
export declare function notFoundAsError(code: 'KEY_NOT_FOUND' | 'KEY_INACTIVE' | 'INVALID_KEY'): AppError;
