import { anchorHandleFor, holderFor, type Holder } from '../domain/holders.js';
import { directoryStatus, parseKey, type KeyType, type KeyTypeQuery } from '../domain/keys.js';
import { registeredHolder } from './breb-collect.js';
import { ProviderError, directoryDown } from './errors.js';
import type { FaultSwitches, KeyRegistry } from './ports.js';

export interface DirectoryEntry {
  anchorHandle: string;
  keyType: KeyType;
  keyValue: string;
  status: 'active' | 'inactive';
  holder: Holder;
}

/**
 * Bre-B directory lookup: a key registered by a participant (live registration) answers its
 * registered holder and anchor handle; any other well-formed key is found with a deterministic
 * holder, except the magic not-found values.
 */
export class LookupKey {
  constructor(
    private readonly store: FaultSwitches,
    private readonly registrations: Pick<KeyRegistry, 'findLive'>,
  ) {}

  async execute(rawKey: string, type: KeyTypeQuery): Promise<DirectoryEntry> {
    if ((await this.store.fault('directory')) === 'down') throw directoryDown();
    const key = parseKey(rawKey, type);
    if (!key) {
      throw new ProviderError(400, 'INVALID_REQUEST', 'La llave no es válida para el tipo indicado.', {
        fields: [{ path: 'keyValue', message: type === 'AUTO' ? 'Llave mal formada.' : `No es una llave ${type} válida.` }],
      });
    }
    const registered = await this.registrations.findLive(key.keyValue);
    if (registered) {
      return {
        anchorHandle: registered.anchorHandle,
        keyType: registered.keyType,
        keyValue: registered.keyValue,
        status: 'active',
        holder: registeredHolder(registered),
      };
    }
    const status = directoryStatus(key.keyValue);
    if (status === 'not_found') throw new ProviderError(404, 'KEY_NOT_FOUND', 'La llave no está registrada en el directorio Bre-B.');
    return { anchorHandle: anchorHandleFor(key.keyValue), keyType: key.keyType, keyValue: key.keyValue, status, holder: holderFor(key.keyValue) };
  }
}
