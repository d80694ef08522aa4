import { createHmac, hkdfSync } from 'node:crypto';
import { SecretBox, maskAccount } from '@wallet/platform';

/** The prefix of a keyed fingerprint (`hm1:` + 64 hex digits), so an unkeyed value is never mistaken for one. */
export const FINGERPRINT_PREFIX = 'hm1:';

/**
 * What the transfer service keeps at rest that must not be readable by someone holding only the
 * database (a dump, a replica, a backup), all keyed by TRANSFER_DATA_KEY:
 * - full ACH account numbers, sealed with the platform's SecretBox (AES-256-GCM, key = SHA-256 of the
 *   key material), next to a masked copy (`****1234`) for display;
 * - fingerprints of values that only need comparing: the request hash of a `reference` claim is
 *   SHA-256 over the client's body, which holds the account number, and the other fields of that body
 *   sit in clear beside it, so an unkeyed hash could be brute-forced back to the number. A fingerprint
 *   is HMAC-SHA256 under a key derived from the same material with HKDF (its own label: independent
 *   of the sealing key).
 * Rotation: not supported yet (one key; see services/transfer/README.md).
 */
export class TransferDataProtection {
  private readonly box: SecretBox;
  private readonly fingerprintKey: Buffer;

  constructor(keyMaterial: string) {
    this.box = new SecretBox(keyMaterial);
    this.fingerprintKey = Buffer.from(hkdfSync('sha256', keyMaterial, 'wallet/transfer', 'fingerprint/v1', 32));
  }

  sealAccount(accountNumber: string): { sealed: string; masked: string } {
    return { sealed: this.box.seal(accountNumber), masked: maskAccount(accountNumber) ?? '' };
  }

  /** Throws, without the value, when it was not sealed with this key or was altered. */
  openAccount(sealed: string): string {
    try {
      return this.box.open(sealed);
    } catch {
      throw new Error('a sealed ACH account number could not be opened: TRANSFER_DATA_KEY is not the key it was sealed with, or the value was altered');
    }
  }

  fingerprint(value: string): string {
    return `${FINGERPRINT_PREFIX}${createHmac('sha256', this.fingerprintKey).update(value, 'utf8').digest('hex')}`;
  }
}
