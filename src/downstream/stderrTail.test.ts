// The kept stderr of a server: bounded in lines and bytes, masked, whole lines across chunks.
import { describe, expect, it } from 'vitest';
import { StderrTail, maskValues } from './stderrTail.js';

describe('StderrTail', () => {
  it('masks a value split across chunks and across a multi-byte character', () => {
    const tail = new StderrTail([{ name: 'KEY', value: 'abc-é-secret' }]);
    const bytes = Buffer.from('using abc-é-secret now\nnext');
    for (const byte of bytes) tail.push(Buffer.from([byte]));
    expect(tail.lines()).toEqual(['using [KEY hidden] now', 'next']);
  });

  it('keeps at most 4 KB, and cuts an endless line from its front without showing half a secret', () => {
    const tail = new StderrTail([{ name: 'KEY', value: 'SECRETSECRET' }]);
    for (let i = 0; i < 100; i++) tail.push(Buffer.from(`${'x'.repeat(200)}\n`));
    expect(tail.lines().join('\n').length).toBeLessThanOrEqual(4096 + 20);
    const endless = new StderrTail([{ name: 'KEY', value: 'SECRETSECRET' }]);
    for (let i = 0; i < 2000; i++) endless.push(Buffer.from('SECRET'));
    const shown = endless.lines().join('');
    expect(shown).not.toMatch(/SECRET/);
    expect(shown.length).toBeLessThanOrEqual(8192 + 20);
  });

  it('hides a value that contains another whole, whatever order the values come in', () => {
    const masked = [
      { name: 'SHORT', value: 'tok1' },
      { name: 'LONG', value: 'tok1-extended' },
    ];
    const tail = new StderrTail(masked);
    tail.push(Buffer.from('auth tok1-extended and tok1\n'));
    expect(tail.lines()).toEqual(['auth [LONG hidden] and [SHORT hidden]']);
    expect(maskValues('auth tok1-extended', masked)).toBe('auth [LONG hidden]');
  });
});
