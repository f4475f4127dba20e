import { describe, expect, it } from 'vitest';
import { SecretBox } from './secretBox.js';

const KEY = 'a-test-key-that-is-long-enough-0123456789';

describe('SecretBox', () => {
  it('opens what it sealed, and the ciphertext does not hold the text', () => {
    const box = new SecretBox(KEY);
    const sealed = box.seal('github', '{"access_token":"secret"}');
    expect(sealed.ciphertext.toString('latin1')).not.toContain('secret');
    expect(box.open('github', sealed)).toEqual({ ok: true, text: '{"access_token":"secret"}' });
    // A fresh IV each time: the same text never seals the same way twice.
    expect(box.seal('github', 'x').iv.equals(box.seal('github', 'x').iv)).toBe(false);
  });

  it('reads a record sealed with another key as unreadable, naming both key ids', () => {
    const sealed = new SecretBox(KEY).seal('github', 'x');
    const other = new SecretBox(`${KEY}-other`);
    const opened = other.open('github', sealed);
    expect(opened).toEqual({
      ok: false,
      reason: expect.stringContaining(`sealed with another LOADOUT_SECRET_KEY (key id ${sealed.keyId}; this loadout's is ${other.keyId})`),
    });
  });

  it('refuses a record moved to another server or damaged, without throwing', () => {
    const box = new SecretBox(KEY);
    const sealed = box.seal('github', 'x');
    expect(box.open('gitlab', sealed)).toMatchObject({ ok: false, reason: expect.stringContaining('integrity check') });
    const damaged = { ...sealed, ciphertext: Buffer.from(sealed.ciphertext.map((byte) => byte ^ 1)) };
    expect(box.open('github', damaged)).toMatchObject({ ok: false });
  });

  it('refuses a key shorter than 32 characters with one line', () => {
    expect(() => new SecretBox('short')).toThrow(
      'LOADOUT_SECRET_KEY has 5 characters; it needs at least 32 (make one with `openssl rand -base64 32`)',
    );
  });
});
