import type { BrebDirectoryPort } from '../../src/app/ports.js';

/** The one Bre-B key the interleaving tests pay, and its holder. */
export const KEY = { keyValue: '3001112233', recipient: { firstName: 'Ana', lastName: 'Gómez', fullName: 'Ana Gómez', idType: 'CC', idValue: '1012345678' } };

/** A directory that always finds KEY active (the interleavings are about the saga, not the lookup). */
export const directory: BrebDirectoryPort = {
  async lookup() {
    return {
      status: 'active', anchorHandle: 'anchor-1', keyType: 'PHONE', keyValue: KEY.keyValue,
      recipient: { ...KEY.recipient, bankName: 'Banco', bankAccountType: 'Ahorros', status: 'ACTIVE' },
    };
  },
};
