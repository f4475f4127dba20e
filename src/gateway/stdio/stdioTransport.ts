// The transport `loadout serve` speaks to its client over: newline-delimited JSON-RPC on this
// process's stdin and stdout. It replaces the SDK's StdioServerTransport, whose zod parse of every
// message and buffer copy per chunk cost time on each forwarded call; it owns no process.
import type { Readable, Writable } from 'node:stream';
import type { Transport, JSONRPCMessage, RequestId } from '@modelcontextprotocol/server';
import { JsonLineReader, JsonLineWriter, MAX_JSON_DEPTH, requestIdOfLine, type RefusedLine } from '../../shared/index.js';
import { ProtocolErrorCode } from '@modelcontextprotocol/server';

/**
 * The largest message a client may send over stdio, as the SDK's stdio server allowed: an agent's
 * requests are small, and a runaway line is not buffered forever. A longer line is discarded
 * and answered with an error naming this limit; the session goes on.
 */
export const MAX_CLIENT_MESSAGE_BYTES = 10 * 1024 * 1024;

/** An MCP server transport over a readable (stdin) and a writable (stdout) stream. */
export class GatewayStdioTransport implements Transport {
  onclose?: () => void;
  onerror?: (error: Error) => void;
  onmessage?: (message: JSONRPCMessage) => void;

  readonly #input: Readable;
  readonly #output: Writable;
  readonly #reader: JsonLineReader;
  readonly #writer: JsonLineWriter;
  readonly #maxMessageBytes: number;
  #started = false;
  #closed = false;
  #onClosed: () => void = () => undefined;
  /** Settles when the transport has closed, for whatever reason (stdin ended, an error, close()). */
  readonly closed = new Promise<void>((resolve) => {
    this.#onClosed = resolve;
  });

  constructor(input: Readable = process.stdin, output: Writable = process.stdout, maxMessageBytes = MAX_CLIENT_MESSAGE_BYTES) {
    this.#input = input;
    this.#output = output;
    this.#writer = new JsonLineWriter(output);
    this.#maxMessageBytes = maxMessageBytes;
    this.#reader = new JsonLineReader(maxMessageBytes, {
      onMessage: (message) => this.onmessage?.(message),
      onError: (error) => this.onerror?.(error),
      onOversize: (line) =>
        this.#refuse(
          line,
          ProtocolErrorCode.InvalidRequest,
          `Message of ${line.bytes} bytes exceeds the ${this.#maxMessageBytes}-byte limit on one stdio message (MAX_CLIENT_MESSAGE_BYTES); it was discarded`,
        ),
      onTooDeep: (line) =>
        this.#refuse(
          line,
          ProtocolErrorCode.ParseError,
          `Parse error: the message is nested deeper than ${MAX_JSON_DEPTH} levels (MAX_JSON_DEPTH); it was discarded`,
        ),
    });
  }

  /** Starts reading the input; the client closing it closes the transport. */
  start(): Promise<void> {
    if (this.#started) return Promise.reject(new Error('GatewayStdioTransport already started (Server.connect starts it)'));
    this.#started = true;
    this.#listen('on');
    return Promise.resolve();
  }

  /** Writes one message as one line. */
  send(message: JSONRPCMessage): Promise<void> {
    if (this.#closed) return Promise.reject(new Error('Not connected: the stdio transport is closed'));
    return this.#writer.write(message);
  }

  /** Stops reading and detaches from the streams (which stay open: they are the process's). Runs once. */
  close(): Promise<void> {
    if (this.#closed) return Promise.resolve();
    this.#closed = true;
    this.#listen('off');
    // Pausing stdin lets the process exit, unless someone else still reads it.
    if (this.#input.listenerCount('data') === 0) this.#input.pause();
    this.#reader.clear();
    this.onclose?.();
    this.#onClosed();
    return Promise.resolve();
  }

  // A refused request gets an answer (the code naming the limit) so its client does not wait for a
  // timeout; a notification gets none, as JSON-RPC says. An id that cannot be found is answered as null.
  #refuse(line: RefusedLine, code: ProtocolErrorCode, message: string): void {
    this.onerror?.(new Error(message));
    const id = requestIdOfLine(line);
    if (id === undefined) return;
    this.send({ jsonrpc: '2.0', id: id as RequestId, error: { code, message } }).catch((error: unknown) => this.onerror?.(error as Error));
  }

  // One list for attaching and detaching, so close() removes exactly what start() added.
  #listen(method: 'on' | 'off'): void {
    this.#input[method]('data', this.#onData);
    this.#input[method]('error', this.#onError);
    this.#input[method]('end', this.#onEnd);
    this.#input[method]('close', this.#onEnd);
    // Without a listener, a client that stops reading (EPIPE) would crash the process.
    this.#output[method]('error', this.#onError);
  }

  // Arrow properties: the same function objects must be passed to on() and off().
  readonly #onData = (chunk: Buffer): void => {
    try {
      this.#reader.push(chunk);
    } catch (error) {
      this.#onError(error as Error);
      void this.close();
    }
  };

  readonly #onError = (error: Error): void => {
    this.onerror?.(error);
  };

  readonly #onEnd = (): void => {
    void this.close();
  };
}
