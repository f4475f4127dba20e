// OAuth records at rest: AES-256-GCM (node:crypto) under a key derived from LOADOUT_SECRET_KEY.
// Each sealed record carries the id of the key that sealed it and is bound to its server's name,
// so a wrong key or a row moved to another server reads as "unreadable", never as garbage.
import { createCipheriv, createDecipheriv, createHmac, hkdfSync, randomBytes } from 'node:crypto';
import { LoadoutError } from '../shared/index.js';

/** A record sealed for one server. */
export interface SealedRecord {
  keyId: string;
  iv: Buffer;
  authTag: Buffer;
  ciphertext: Buffer;
}

/** The outcome of opening a sealed record: its text, or why it cannot be read. */
export type OpenedRecord = { ok: true; text: string } | { ok: false; reason: string };

/** The fewest characters LOADOUT_SECRET_KEY may have (32 random bytes in base64 are 44). */
export const MIN_SECRET_KEY_CHARS = 32;
const IV_BYTES = 12;

/** Seals and opens records with one key. */
export class SecretBox {
  readonly #key: Buffer;
  /** A short public id of the key: tells "sealed with another key" from "damaged". */
  readonly keyId: string;

  /** `secret`: the value of LOADOUT_SECRET_KEY. */
  constructor(secret: string) {
    if (secret.length < MIN_SECRET_KEY_CHARS) {
      throw new LoadoutError(
        'STORE_SECRET_KEY',
        `LOADOUT_SECRET_KEY has ${secret.length} characters; it needs at least ${MIN_SECRET_KEY_CHARS} (make one with \`openssl rand -base64 32\`)`,
      );
    }
    this.#key = Buffer.from(hkdfSync('sha256', secret, 'loadout store', 'oauth records aes-256-gcm', 32));
    this.keyId = createHmac('sha256', this.#key).update('loadout key id').digest('hex').slice(0, 12);
  }

  /** Encrypt `text` for `server` (the server name is authenticated too). */
  seal(server: string, text: string): SealedRecord {
    const iv = randomBytes(IV_BYTES);
    const cipher = createCipheriv('aes-256-gcm', this.#key, iv);
    cipher.setAAD(Buffer.from(`oauth:${server}`));
    const ciphertext = Buffer.concat([cipher.update(text, 'utf8'), cipher.final()]);
    return { keyId: this.keyId, iv, authTag: cipher.getAuthTag(), ciphertext };
  }

  /** Decrypt a record sealed for `server`; a wrong key or a damaged row is a reason, not a throw. */
  open(server: string, sealed: SealedRecord): OpenedRecord {
    if (sealed.keyId !== this.keyId) {
      return {
        ok: false,
        reason: `sealed with another LOADOUT_SECRET_KEY (key id ${sealed.keyId}; this loadout's is ${this.keyId}): set the key it was stored with, or log in again`,
      };
    }
    try {
      const decipher = createDecipheriv('aes-256-gcm', this.#key, sealed.iv);
      decipher.setAAD(Buffer.from(`oauth:${server}`));
      decipher.setAuthTag(sealed.authTag);
      return { ok: true, text: Buffer.concat([decipher.update(sealed.ciphertext), decipher.final()]).toString('utf8') };
    } catch {
      return { ok: false, reason: 'fails its integrity check (damaged, or moved from another server); log in again' };
    }
  }
}
