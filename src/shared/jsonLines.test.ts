// The line framing under both stdio transports: chunk boundaries, line endings, bad lines and
// size limits on the way in; one line per message and backpressure on the way out.
import { PassThrough, Writable } from 'node:stream';
import type { JSONObject } from '@modelcontextprotocol/server';
import { describe, expect, it } from 'vitest';
import { JsonLineReader, JsonLineWriter, methodOfLine, requestIdOfLine, type RefusedLine } from './jsonLines.js';
import { MAX_JSON_DEPTH } from './jsonDepth.js';

/** A reader that records what it reports. */
function recordingReader(maxMessageBytes = 1024 * 1024): { reader: JsonLineReader; messages: unknown[]; errors: string[] } {
  const messages: unknown[] = [];
  const errors: string[] = [];
  const reader = new JsonLineReader(maxMessageBytes, {
    onMessage: (message) => messages.push(message),
    onError: (error) => errors.push(error.message),
  });
  return { reader, messages, errors };
}

const ping = (id: number) => ({ jsonrpc: '2.0', id, method: 'ping' });
const line = (message: unknown) => `${JSON.stringify(message)}\n`;

describe('JsonLineReader', () => {
  it('reads one whole message per chunk', () => {
    const { reader, messages, errors } = recordingReader();
    reader.push(Buffer.from(line(ping(1))));
    reader.push(Buffer.from(line(ping(2))));
    expect(messages).toEqual([ping(1), ping(2)]);
    expect(errors).toEqual([]);
  });

  it('reads many messages from one chunk, and keeps a trailing partial one for the next', () => {
    const { reader, messages } = recordingReader();
    const third = line(ping(3));
    reader.push(Buffer.from(line(ping(1)) + line(ping(2)) + third.slice(0, 5)));
    expect(messages).toEqual([ping(1), ping(2)]);
    reader.push(Buffer.from(third.slice(5)));
    expect(messages).toEqual([ping(1), ping(2), ping(3)]);
  });

  it('reads a message split at any byte, including inside multi-byte UTF-8 characters', () => {
    const message = { jsonrpc: '2.0', id: 1, result: { text: 'naïve € 😀 日本語' } };
    const bytes = Buffer.from(line(message));
    for (let split = 1; split < bytes.length; split++) {
      const { reader, messages, errors } = recordingReader();
      reader.push(bytes.subarray(0, split));
      reader.push(bytes.subarray(split));
      expect(messages, `split at byte ${split}`).toEqual([message]);
      expect(errors).toEqual([]);
    }
  });

  it('reads a message that arrives one byte per chunk', () => {
    const { reader, messages } = recordingReader();
    for (const byte of Buffer.from(line(ping(7)) + line(ping(8)))) reader.push(Buffer.from([byte]));
    expect(messages).toEqual([ping(7), ping(8)]);
  });

  it('accepts \\r\\n line endings, also when the \\r and \\n arrive in different chunks', () => {
    const { reader, messages, errors } = recordingReader();
    reader.push(Buffer.from(`${JSON.stringify(ping(1))}\r\n${JSON.stringify(ping(2))}\r`));
    reader.push(Buffer.from('\n'));
    expect(messages).toEqual([ping(1), ping(2)]);
    expect(errors).toEqual([]);
  });

  it('skips empty lines without an error', () => {
    const { reader, messages, errors } = recordingReader();
    reader.push(Buffer.from(`\n\r\n${line(ping(1))}\n`));
    expect(messages).toEqual([ping(1)]);
    expect(errors).toEqual([]);
  });

  it('reports lines that are not JSON-RPC messages and keeps reading', () => {
    const { reader, messages, errors } = recordingReader();
    const junk = [
      'Server starting... (not JSON)',
      '{"half": "an object without jsonrpc"}',
      '[1,2]',
      '42',
      'null',
      '{"jsonrpc":"1.0","id":1}',
      '{"jsonrpc":"2.0",',
    ];
    reader.push(Buffer.from(junk.map((text) => `${text}\n`).join('') + line(ping(1))));
    expect(messages).toEqual([ping(1)]);
    expect(errors).toHaveLength(junk.length);
    expect(errors[0]).toBe('Ignored a line that is not JSON: "Server starting... (not JSON)"');
    expect(errors[1]).toMatch(/^Ignored a line that is not a JSON-RPC 2\.0 message: /);
  });

  it('quotes only the start of a long bad line', () => {
    const { reader, errors } = recordingReader();
    reader.push(Buffer.from(`${'x'.repeat(10_000)}\n`));
    expect(errors[0]!.length).toBeLessThan(300);
  });

  it('passes a handler that throws to onError, and still reads the messages after it', () => {
    const errors: string[] = [];
    const seen: unknown[] = [];
    const reader = new JsonLineReader(1024, {
      onMessage: (message) => {
        seen.push(message);
        if (seen.length === 1) throw new Error('handler failed');
      },
      onError: (error) => errors.push(error.message),
    });
    reader.push(Buffer.from(line(ping(1)) + line(ping(2))));
    expect(seen).toEqual([ping(1), ping(2)]);
    expect(errors).toEqual(['handler failed']);
  });

  it('with onOversize, skips an over-size line to its newline and reports its size, head and tail', () => {
    const oversize: Array<{ bytes: number; head: string; tail: string }> = [];
    const messages: unknown[] = [];
    const reader = new JsonLineReader(45, {
      onMessage: (message) => messages.push(message),
      onError: () => undefined,
      onOversize: (found) => oversize.push(found),
    });
    reader.push(Buffer.from('{"a":"' + 'x'.repeat(50)));
    reader.push(Buffer.from('y'.repeat(20)));
    reader.push(Buffer.from('z"}\n' + line(ping(1)) + '{"b":"' + 'w'.repeat(50) + '"}\n'));
    expect(messages).toEqual([ping(1)]);
    expect(oversize.map((found) => found.bytes)).toEqual([79, 58]);
    expect(oversize[0]!.head.startsWith('{"a":"xxx')).toBe(true);
    expect(oversize[0]!.tail.endsWith('yyz"}')).toBe(true);
  });

  it('discards a line 1,000,000 levels deep unparsed, reports its head and tail, and reads the next', () => {
    const deep = `${'['.repeat(1_000_000)}${']'.repeat(1_000_000)}`;
    const text = `{"jsonrpc":"2.0","id":"deep","method":"tools/call","params":{"arguments":{"a":${deep}}}}`;
    const refused: RefusedLine[] = [];
    const messages: unknown[] = [];
    const reader = new JsonLineReader(10 * 1024 * 1024, {
      onMessage: (message) => messages.push(message),
      onError: () => undefined,
      onTooDeep: (found) => refused.push(found),
    });
    reader.push(Buffer.from(`${text}\n${line(ping(1))}`));
    expect(messages).toEqual([ping(1)]);
    expect(refused).toHaveLength(1);
    expect(refused[0]!.bytes).toBe(text.length);
    expect(requestIdOfLine(refused[0]!)).toBe('deep');
    expect(methodOfLine(refused[0]!)).toBe('tools/call');
  });

  it('without onTooDeep, reports a line nested past the limit as an error', () => {
    const { reader, messages, errors } = recordingReader(10 * 1024 * 1024);
    reader.push(
      Buffer.from(`{"jsonrpc":"2.0","id":1,"result":${'['.repeat(MAX_JSON_DEPTH + 1)}${']'.repeat(MAX_JSON_DEPTH + 1)}}\n${line(ping(2))}`),
    );
    expect(messages).toEqual([ping(2)]);
    expect(errors).toEqual([expect.stringContaining(`nested deeper than ${MAX_JSON_DEPTH} levels`)]);
  });

  it('accepts a message of exactly the size limit', () => {
    const text = JSON.stringify(ping(1));
    const { reader, messages } = recordingReader(Buffer.byteLength(text));
    reader.push(Buffer.from(`${text}\n`));
    expect(messages).toEqual([ping(1)]);
  });

  it('throws when a line outgrows the size limit before its newline arrives', () => {
    const { reader } = recordingReader(100);
    reader.push(Buffer.from('x'.repeat(60)));
    expect(() => reader.push(Buffer.from('x'.repeat(60)))).toThrow('A message exceeded the 100-byte limit; the connection is closed');
  });

  it('throws for a whole line over the size limit, whether it came in one chunk or several', () => {
    const tooLong = line({ jsonrpc: '2.0', id: 1, result: { text: 'x'.repeat(200) } });
    expect(() => recordingReader(100).reader.push(Buffer.from(tooLong))).toThrow(/100-byte limit/);
    const { reader } = recordingReader(150);
    reader.push(Buffer.from(tooLong.slice(0, 140)));
    expect(() => reader.push(Buffer.from(tooLong.slice(140)))).toThrow(/150-byte limit/);
  });
});

describe('JsonLineWriter', () => {
  it('writes each message as one JSON line and settles at once while the stream has room', async () => {
    const stream = new PassThrough();
    const writer = new JsonLineWriter(stream);
    await writer.write({ jsonrpc: '2.0', id: 1, method: 'ping' });
    await writer.write({ jsonrpc: '2.0', method: 'notifications/initialized' });
    expect((stream.read() as Buffer | null)?.toString()).toBe(
      '{"jsonrpc":"2.0","id":1,"method":"ping"}\n{"jsonrpc":"2.0","method":"notifications/initialized"}\n',
    );
  });

  it('writes an answer 1,000,000 levels deep as an error answer to its request', async () => {
    const stream = new PassThrough();
    const writer = new JsonLineWriter(stream);
    const deep = JSON.parse(`${'['.repeat(1_000_000)}${']'.repeat(1_000_000)}`) as JSONObject;
    await writer.write({ jsonrpc: '2.0', id: 7, result: { structuredContent: { deep } } });
    const line = JSON.parse((stream.read() as Buffer).toString()) as { id: number; error: { code: number } };
    expect(line).toMatchObject({ id: 7, error: { code: -32603 } });
  });

  it('writes the lines sent in one tick with one write, in order, and the next tick with another', async () => {
    const writes: string[] = [];
    const stream = new Writable({ write: (chunk: Buffer, _encoding, callback) => (writes.push(chunk.toString()), callback()) });
    const writer = new JsonLineWriter(stream);
    await Promise.all([1, 2, 3].map((id) => writer.write({ jsonrpc: '2.0', id, method: 'ping' })));
    await writer.write({ jsonrpc: '2.0', id: 4, method: 'ping' });
    expect(writes).toEqual([
      [1, 2, 3].map((id) => `{"jsonrpc":"2.0","id":${id},"method":"ping"}\n`).join(''),
      '{"jsonrpc":"2.0","id":4,"method":"ping"}\n',
    ]);
  });

  it('holds sends made while the stream is full until it drains, with one drain listener for all', async () => {
    const pending: Array<() => void> = [];
    const stream = new Writable({ highWaterMark: 1, write: (_chunk, _encoding, callback) => pending.push(callback) });
    const writer = new JsonLineWriter(stream);
    let settled = 0;
    const sends = [1, 2, 3].map((id) => writer.write({ jsonrpc: '2.0', id, method: 'ping' }).then(() => settled++));
    await new Promise((resolve) => setImmediate(resolve));
    expect(settled).toBe(0);
    expect(stream.listenerCount('drain')).toBe(1);
    while (pending.length) pending.shift()!();
    await Promise.all(sends);
    expect(settled).toBe(3);
    expect(stream.listenerCount('drain')).toBe(0);
  });

  it('releases sends waiting on a stream that closes instead of draining', async () => {
    const stream = new Writable({ highWaterMark: 1, write: () => undefined });
    const send = new JsonLineWriter(stream).write({ jsonrpc: '2.0', id: 1, method: 'ping' });
    stream.destroy();
    await expect(send).resolves.toBeUndefined();
  });

  it('rejects a send to a stream that has ended', async () => {
    const stream = new PassThrough();
    stream.end();
    await expect(new JsonLineWriter(stream).write({ jsonrpc: '2.0', id: 1, method: 'ping' })).rejects.toThrow(/Not connected/);
  });
});
