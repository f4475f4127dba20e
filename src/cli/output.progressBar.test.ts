import { describe, expect, it } from 'vitest';
import { progressBar } from './output.js';

function stream(isTTY: boolean): { writes: string[]; stream: NodeJS.WriteStream } {
  const writes: string[] = [];
  return { writes, stream: { isTTY, write: (text: string) => writes.push(text) } as unknown as NodeJS.WriteStream };
}

describe('progressBar', () => {
  it('redraws one line with the bar and the message on a TTY', () => {
    const tty = stream(true);
    const bar = progressBar(tty.stream);
    bar.update({ done: 27, total: 60, message: 'Testing candidate 2/4 … 45%' });
    bar.done();
    expect(tty.writes[0]).toBe('\r[###########-------------] Testing candidate 2/4 … 45%\x1b[K');
    expect(tty.writes[1]).toBe('\r\x1b[K');
  });

  it('writes nothing when stderr is not a TTY', () => {
    const pipe = stream(false);
    progressBar(pipe.stream).update({ done: 1, total: 2, message: 'Testing baseline (canonical) … 50%' });
    expect(pipe.writes).toEqual([]);
  });
});
