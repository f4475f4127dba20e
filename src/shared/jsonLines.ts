// Newline-delimited JSON-RPC framing for loadout's stdio transports: Buffer chunks in, parsed
// messages out, and messages written one line each. It checks only that a line is a JSON object
// with `jsonrpc: "2.0"` nested no deeper than MAX_JSON_DEPTH: message shapes are the SDK
// Protocol's to validate, so no zod here.
import type { Writable } from 'node:stream';
import { ProtocolErrorCode, type JSONRPCMessage, type RequestId } from '@modelcontextprotocol/server';
import { MAX_JSON_DEPTH, nestedDeeperThan } from './jsonDepth.js';

const NEWLINE = 0x0a;
const CARRIAGE_RETURN = 0x0d;
// How much of a rejected line an error message quotes.
const QUOTED_LINE_CHARS = 200;

// How much of the start and the end of a refused line is kept, to find its request id.
const KEPT_EDGE_BYTES = 1024;

// A request id as JSON: a number or a string.
const ID = String.raw`(-?\d+(?:\.\d+)?|"(?:[^"\\]|\\.)*")`;
// `{"id": …` at the start, perhaps after "jsonrpc" and "method" (how most clients write a request).
const ID_AT_START = new RegExp(String.raw`^\s*\{(?:\s*"(?:jsonrpc|method)"\s*:\s*"[^"\\]*"\s*,)*\s*"id"\s*:\s*` + ID);
// `"id": …}` at the end (the SDK writes `{method, params, jsonrpc, id}`).
const ID_AT_END = new RegExp(String.raw`[,{]\s*"id"\s*:\s*` + ID + String.raw`\s*\}\s*$`);

/** A line discarded unparsed (longer than the limit, or nested too deep): its size and its first and last bytes. */
export interface RefusedLine {
  bytes: number;
  head: string;
  tail: string;
}

/** What a JsonLineReader reports to. */
interface JsonLineHandlers {
  onMessage(message: JSONRPCMessage): void;
  /** A line that is not a JSON-RPC message (or a throwing onMessage); reading goes on. */
  onError(error: Error): void;
  /**
   * A line over the limit, skipped up to its newline; reading goes on. Without this handler
   * `push` throws instead, and the stream's transport should close.
   */
  onOversize?(line: RefusedLine): void;
  /** A line nested deeper than MAX_JSON_DEPTH, discarded unparsed; reading goes on. Without it, onError. */
  onTooDeep?(line: RefusedLine): void;
}

/**
 * Splits a byte stream into JSON-RPC messages, one per line. A line past `maxMessageBytes` is
 * skipped and reported (onOversize) or, without that handler, makes `push` throw.
 */
export class JsonLineReader {
  readonly #maxMessageBytes: number;
  readonly #handlers: JsonLineHandlers;
  // The start of a line whose newline has not arrived yet, in the chunks it came in.
  #partial: Buffer[] = [];
  #partialBytes = 0;
  // The over-size line being skipped up to its newline (its last bytes kept as bytes, to decode whole).
  #skipped: { bytes: number; head: string; tail: Buffer } | undefined;

  constructor(maxMessageBytes: number, handlers: JsonLineHandlers) {
    this.#maxMessageBytes = maxMessageBytes;
    this.#handlers = handlers;
  }

  /** Reads every whole line in `chunk` (with what earlier chunks left over). */
  push(chunk: Buffer): void {
    let start = 0;
    if (this.#skipped) {
      const end = chunk.indexOf(NEWLINE);
      this.#skip(chunk, 0, end === -1 ? chunk.length : end);
      if (end === -1) return;
      this.#endSkip();
      start = end + 1;
    }
    let newline = chunk.indexOf(NEWLINE, start);
    if (this.#partialBytes > 0 && newline !== -1) {
      // Joined as bytes, not strings, so a character split across chunks decodes whole.
      const line = Buffer.concat([...this.#partial, chunk.subarray(start, newline)]);
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
        const partial = Buffer.concat(this.#partial);
        this.clear();
        this.#oversize(partial, 0, partial.length);
      }
    }
  }

  /** Drops a partly received line. */
  clear(): void {
    this.#partial = [];
    this.#partialBytes = 0;
    this.#skipped = undefined;
  }

  // Starts skipping an over-size line (bytes[start, end) is its beginning), or throws without a handler.
  #oversize(bytes: Buffer, start: number, end: number): void {
    if (!this.#handlers.onOversize) throw tooLarge(this.#maxMessageBytes);
    this.#skipped = { bytes: 0, head: bytes.toString('utf8', start, Math.min(end, start + KEPT_EDGE_BYTES)), tail: Buffer.alloc(0) };
    this.#skip(bytes, start, end);
  }

  #skip(bytes: Buffer, start: number, end: number): void {
    const skipped = this.#skipped!;
    skipped.bytes += end - start;
    const kept = Buffer.concat([skipped.tail, bytes.subarray(Math.max(start, end - KEPT_EDGE_BYTES), end)]);
    skipped.tail = kept.subarray(Math.max(0, kept.length - KEPT_EDGE_BYTES));
  }

  #endSkip(): void {
    const { bytes, head, tail } = this.#skipped!;
    this.#skipped = undefined;
    this.#handlers.onOversize!({ bytes, head, tail: tail.toString('utf8') });
  }

  #readLine(bytes: Buffer, start: number, end: number): void {
    if (end > start && bytes[end - 1] === CARRIAGE_RETURN) end--;
    if (end === start) return;
    if (end - start > this.#maxMessageBytes) {
      this.clear();
      this.#oversize(bytes, start, end);
      this.#endSkip();
      return;
    }
    const text = bytes.toString('utf8', start, end);
    // Parsed, a value this deep would overflow the stack of the first walk over it (see MAX_JSON_DEPTH).
    if (nestedDeeperThan(text)) {
      if (this.#handlers.onTooDeep)
        this.#handlers.onTooDeep({ bytes: end - start, head: text.slice(0, KEPT_EDGE_BYTES), tail: text.slice(-KEPT_EDGE_BYTES) });
      else this.#handlers.onError(new Error(`Ignored a line nested deeper than ${MAX_JSON_DEPTH} levels: ${quote(text)}`));
      return;
    }
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
  // One wait shared by every send made while the stream is full, so listeners do not pile up.
  #drained: Promise<void> | undefined;

  constructor(stream: Writable) {
    this.#stream = stream;
  }

  /** Writes `message` as one line (at the end of this tick); rejects if the stream can no longer be written. */
  write(message: JSONRPCMessage): Promise<void> {
    if (!this.#stream.writable) return Promise.reject(new Error('Not connected: the stream is closed'));
    this.#batch += lineOf(message) + '\n';
    // A promise reaction, not queueMicrotask: that one makes an AsyncResource per call.
    this.#batchWritten ??= Promise.resolve().then(this.#flush);
    return this.#batchWritten;
  }

  readonly #flush = (): Promise<void> | undefined => {
    const text = this.#batch;
    this.#batch = '';
    this.#batchWritten = undefined;
    // A stream closed since the sends were accepted releases them, as one closed while full does.
    if (!this.#stream.writable || this.#stream.write(text)) return undefined;
    return this.#whenDrained();
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

// A message as one line; an answer too deep to stringify becomes its refusal (see tooDeepAnswer).
function lineOf(message: JSONRPCMessage): string {
  try {
    return JSON.stringify(message);
  } catch (error) {
    const refusal = tooDeepAnswer(message, error);
    if (!refusal) throw error;
    return JSON.stringify(refusal);
  }
}

/**
 * The error answer to send instead of `message` when writing it failed with `error` for being
 * nested too deep for JSON.stringify (RangeError: a downstream HTTP server's answer, parsed whole
 * by the SDK), so its caller is not left waiting; undefined for any other failure or message.
 */
function tooDeepAnswer(message: JSONRPCMessage, error: unknown): JSONRPCMessage | undefined {
  const id = (message as { id?: unknown }).id;
  if (!(error instanceof RangeError) || !('result' in message || 'error' in message)) return undefined;
  if (typeof id !== 'string' && typeof id !== 'number') return undefined;
  const refusal = `The answer is nested too deep to be sent (past the ${MAX_JSON_DEPTH} levels of MAX_JSON_DEPTH)`;
  return { jsonrpc: '2.0', id, error: { code: ProtocolErrorCode.InternalError, message: refusal } };
}

function isJsonRpcMessage(value: unknown): value is JSONRPCMessage {
  return typeof value === 'object' && value !== null && (value as { jsonrpc?: unknown }).jsonrpc === '2.0';
}

/**
 * The id of a refused request or response from its first and last bytes; null when it looks like a
 * request but its id is out of sight; undefined for a notification (a method and no id).
 */
export function requestIdOfLine(line: RefusedLine): RequestId | null | undefined {
  const found = ID_AT_START.exec(line.head) ?? ID_AT_END.exec(line.tail);
  if (found) return JSON.parse(found[1]!) as RequestId;
  return methodOfLine(line)?.startsWith('notifications/') ? undefined : null;
}

/** The method of a refused request or notification, from its first bytes; undefined for a response (or out of sight). */
export function methodOfLine(line: RefusedLine): string | undefined {
  return /^\s*\{(?:[^{}]*?,)?\s*"method"\s*:\s*"([^"]*)"/.exec(line.head)?.[1];
}

function tooLarge(maxMessageBytes: number): Error {
  return new Error(`A message exceeded the ${maxMessageBytes}-byte limit; the connection is closed`);
}

function quote(text: string): string {
  return JSON.stringify(text.length > QUOTED_LINE_CHARS ? `${text.slice(0, QUOTED_LINE_CHARS)}…` : text);
}
