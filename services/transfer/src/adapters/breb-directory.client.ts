import { AppError, type Logger } from '@wallet/platform';
import { isKeyType, type KeyType } from '../domain/keys.js';
import type { BrebDirectoryPort, DirectoryResult } from '../app/ports.js';
import { callJson, field, str } from './http.js';
import { meterRailCall } from './rail-metrics.js';

/**
 * The Bre-B directory (docs/sandbox.md): `GET /breb/directory/keys/{keyValue}?type=`.
 * 200 active/inactive, 404 not found, 4xx malformed; anything else (5xx, time-out, refused) means
 * the directory cannot answer now → BREB_DIRECTORY_LOOKUP_FAILED (503).
 */
export class HttpBrebDirectory implements BrebDirectoryPort {
  constructor(
    private readonly baseUrl: string,
    private readonly timeoutMs: number,
    private readonly log: Logger,
  ) {}

  async lookup(keyValue: string, keyType: KeyType): Promise<DirectoryResult> {
    const url = `${this.baseUrl.replace(/\/$/, '')}/breb/directory/keys/${encodeURIComponent(keyValue)}?type=${keyType}`;
    const out = await meterRailCall('BREB_DIRECTORY', 'lookup', () => callJson('GET', url, undefined, this.timeoutMs), [404, 400, 422]);
    if (out.kind === 'error') {
      this.log.warn({ error: out.error, keyType }, 'Bre-B directory unreachable');
      throw new AppError('BREB_DIRECTORY_LOOKUP_FAILED');
    }
    if (out.status === 404) return { status: 'not_found' };
    if (out.status === 400 || out.status === 422) {
      return field(out.body, 'error') === 'KEY_NOT_FOUND' ? { status: 'not_found' } : { status: 'invalid' };
    }
    if (out.status !== 200) {
      this.log.warn({ status: out.status, keyType }, 'Bre-B directory answered with an error');
      throw new AppError('BREB_DIRECTORY_LOOKUP_FAILED');
    }
    const b = out.body;
    const holder = field(b, 'holder');
    const anchorHandle = str(field(b, 'anchorHandle'));
    const type = str(field(b, 'keyType'));
    const value = str(field(b, 'keyValue'));
    const status = str(field(b, 'status'));
    const firstName = str(field(holder, 'firstName'));
    const lastName = str(field(holder, 'lastName')) ?? '';
    const idValue = str(field(holder, 'idValue'));
    if (!anchorHandle || !type || !isKeyType(type) || !value || !status || !firstName || !idValue) {
      this.log.warn({ keyType }, 'Bre-B directory answered a malformed entry');
      throw new AppError('BREB_DIRECTORY_LOOKUP_FAILED');
    }
    const first = firstName.toLocaleUpperCase('es-CO');
    return {
      status: status === 'active' ? 'active' : 'inactive',
      anchorHandle,
      keyType: type,
      keyValue: value,
      recipient: {
        firstName: first,
        lastName,
        fullName: lastName ? `${first} ${lastName}` : first,
        bankName: str(field(holder, 'bankName')) ?? '',
        bankAccountType: str(field(holder, 'bankAccountType')) ?? '',
        status,
        idType: str(field(holder, 'idType')) ?? '',
        idValue,
      },
    };
  }
}
