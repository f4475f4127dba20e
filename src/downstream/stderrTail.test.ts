// The kept stderr of a server: bounded in lines and bytes, masked, whole lines across chunks.
import { describe, expect, it } from 'vitest';
import { StderrTail } from './stderrTail.js';

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
});
