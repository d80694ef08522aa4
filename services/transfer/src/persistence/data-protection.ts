import { createHmac, hkdfSync } from 'node:crypto';
import { SecretBox, maskAccount } from '@wallet/platform';
import { canonicalDestination, type ScreenedDestination } from '../domain/destination-fingerprint.js';

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
 * - destination fingerprints (docs/security.md "Screening on the destination account"): the keyed HMAC of a payout's canonical
 *   destination (domain/destination-fingerprint.ts), under its own HKDF label, so the AML list and the
 *   counterparty limits can match an account without its number in clear. An account number is a
 *   short digit string: unkeyed, its hash would be a lookup table away from the number.
 * Rotation: not supported yet (one key; see services/transfer/README.md). Rotating the key would also
 * mean recomputing the destination fingerprints (of transfers from the sealed numbers; AML account
 * entries keep no sealed number, so they would be entered again).
 */
export class TransferDataProtection {
  private readonly box: SecretBox;
  private readonly fingerprintKey: Buffer;
  private readonly destinationKey: Buffer;

  constructor(keyMaterial: string) {
    this.box = new SecretBox(keyMaterial);
    this.fingerprintKey = Buffer.from(hkdfSync('sha256', keyMaterial, 'wallet/transfer', 'fingerprint/v1', 32));
    this.destinationKey = Buffer.from(hkdfSync('sha256', keyMaterial, 'wallet/transfer', 'destination-fingerprint/v1', 32));
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

  /** The destination's screening fingerprint (`hm1:` + 64 hex digits): AML account entries and counterparty limits. */
  destinationFingerprint(d: ScreenedDestination): string {
    return `${FINGERPRINT_PREFIX}${createHmac('sha256', this.destinationKey).update(canonicalDestination(d), 'utf8').digest('hex')}`;
  }
}
