// Newline-delimited JSON-RPC framing for loadout's stdio transports: Buffer chunks in, parsed
// messages out, and messages written one line each. It checks only that a line is a JSON object
// with `jsonrpc: "2.0"`: message shapes are the SDK Protocol's to validate, so no zod here.
import type { Writable } from 'node:stream';
import type { JSONRPCMessage } from '@modelcontextprotocol/sdk/types.js';

const NEWLINE = 0x0a;
const CARRIAGE_RETURN = 0x0d;
// How much of a rejected line an error message quotes.
const QUOTED_LINE_CHARS = 200;

/** What a JsonLineReader reports to. */
export interface JsonLineHandlers {
  onMessage(message: JSONRPCMessage): void;
  /** A line that is not a JSON-RPC message (or a throwing onMessage); reading goes on. */
  onError(error: Error): void;
}

/**
 * Splits a byte stream into JSON-RPC messages, one per line. `push` throws when a line grows
 * past `maxMessageBytes`: the stream is then out of step and its transport should close.
 */
export class JsonLineReader {
  readonly #maxMessageBytes: number;
  readonly #handlers: JsonLineHandlers;
  // The start of a line whose newline has not arrived yet, in the chunks it came in.
  #partial: Buffer[] = [];
  #partialBytes = 0;

  constructor(maxMessageBytes: number, handlers: JsonLineHandlers) {
    this.#maxMessageBytes = maxMessageBytes;
    this.#handlers = handlers;
  }

  /** Reads every whole line in `chunk` (with what earlier chunks left over). */
  push(chunk: Buffer): void {
    let start = 0;
    let newline = chunk.indexOf(NEWLINE);
    if (this.#partialBytes > 0 && newline !== -1) {
      // Joined as bytes, not strings, so a character split across chunks decodes whole.
      const line = Buffer.concat([...this.#partial, chunk.subarray(0, newline)]);
      this.clear();
      this.#readLine(line, 0, line.length);
      start = newline + 1;
      newline = chunk.indexOf(NEWLINE, start);
    }
    while (newline !== -1) {
      this.#readLine(chunk, start, newline);
      start = newline + 1;
      newline = chunk.indexOf(NEWLINE, start);
    }
    if (start < chunk.length) {
      this.#partial.push(start === 0 ? chunk : chunk.subarray(start));
      this.#partialBytes += chunk.length - start;
      if (this.#partialBytes > this.#maxMessageBytes) {
        this.clear();
        throw tooLarge(this.#maxMessageBytes);
      }
    }
  }

  /** Drops a partly received line. */
  clear(): void {
    this.#partial = [];
    this.#partialBytes = 0;
  }

  #readLine(bytes: Buffer, start: number, end: number): void {
    if (end > start && bytes[end - 1] === CARRIAGE_RETURN) end--;
    if (end === start) return;
    if (end - start > this.#maxMessageBytes) {
      this.clear();
      throw tooLarge(this.#maxMessageBytes);
    }
    const text = bytes.toString('utf8', start, end);
    let message: unknown;
    try {
      message = JSON.parse(text);
    } catch {
      this.#handlers.onError(new Error(`Ignored a line that is not JSON: ${quote(text)}`));
      return;
    }
    if (!isJsonRpcMessage(message)) {
      this.#handlers.onError(new Error(`Ignored a line that is not a JSON-RPC 2.0 message: ${quote(text)}`));
      return;
    }
    // A throwing handler must not cost the messages after it in the same chunk.
    try {
      this.#handlers.onMessage(message);
    } catch (error) {
      this.#handlers.onError(error instanceof Error ? error : new Error(String(error)));
    }
  }
}

/**
 * Writes messages to a stream, one line each. The lines written in one tick go out in one write:
 * each write to a pipe is a system call and wakes the reader, and it costs more than the rest of
 * forwarding a call, so eight calls that arrived in one chunk leave in one write, as a byte relay's
 * would. A send settles when the stream takes its line (or, past its buffer limit, at the next
 * 'drain'), as the SDK's stdio transports do.
 */
export class JsonLineWriter {
  readonly #stream: Writable;
  // The lines waiting for the end of this tick, and the promise their senders hold.
  #batch = '';
  #batchWritten: Promise<void> | undefined;
  #settleBatch: (() => void) | undefined;
  // One wait shared by every send made while the stream is full, so listeners do not pile up.
  #drained: Promise<void> | undefined;

  constructor(stream: Writable) {
    this.#stream = stream;
  }

  /** Writes `message` as one line (at the end of this tick); rejects if the stream can no longer be written. */
  write(message: JSONRPCMessage): Promise<void> {
    if (!this.#stream.writable) return Promise.reject(new Error('Not connected: the stream is closed'));
    this.#batch += JSON.stringify(message) + '\n';
    if (!this.#batchWritten) {
      this.#batchWritten = new Promise((resolve) => (this.#settleBatch = resolve));
      queueMicrotask(this.#flush);
    }
    return this.#batchWritten;
  }

  readonly #flush = (): void => {
    const [text, settle] = [this.#batch, this.#settleBatch!];
    this.#batch = '';
    this.#batchWritten = this.#settleBatch = undefined;
    // A stream closed since the sends were accepted releases them, as one closed while full does.
    if (!this.#stream.writable || this.#stream.write(text)) return settle();
    void this.#whenDrained().then(settle);
  };

  #whenDrained(): Promise<void> {
    this.#drained ??= new Promise((resolve) => {
      // A stream that closes while full never drains: its senders are released all the same.
      const done = (): void => {
        this.#stream.off('drain', done);
        this.#stream.off('close', done);
        this.#drained = undefined;
        resolve();
      };
      this.#stream.on('drain', done);
      this.#stream.on('close', done);
    });
    return this.#drained;
  }
}

function isJsonRpcMessage(value: unknown): value is JSONRPCMessage {
  return typeof value === 'object' && value !== null && (value as { jsonrpc?: unknown }).jsonrpc === '2.0';
}

function tooLarge(maxMessageBytes: number): Error {
  return new Error(`A message exceeded the ${maxMessageBytes}-byte limit; the connection is closed`);
}

function quote(text: string): string {
  return JSON.stringify(text.length > QUOTED_LINE_CHARS ? `${text.slice(0, QUOTED_LINE_CHARS)}…` : text);
}
