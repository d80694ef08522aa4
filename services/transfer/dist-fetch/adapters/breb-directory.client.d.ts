import { type Logger } from '@wallet/platform';
import { type KeyType } from '../domain/keys.js';
import type { BrebDirectoryPort, DirectoryResult } from '../app/ports.js';
/**
 * The Bre-B directory (docs/sandbox.md): `GET /breb/directory/keys/{keyValue}?type=`.
 * 200 active/inactive, 404 not found, 4xx malformed; anything else (5xx, time-out, refused) means
 * the directory cannot answer now → BREB_DIRECTORY_LOOKUP_FAILED (503).
 */
export declare class HttpBrebDirectory implements BrebDirectoryPort {
    private readonly baseUrl;
    private readonly timeoutMs;
    private readonly log;
    constructor(baseUrl: string, timeoutMs: number, log: Logger);
    lookup(keyValue: string, keyType: KeyType): Promise<DirectoryResult>;
}
