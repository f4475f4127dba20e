// The transport `loadout serve` speaks to its client over: newline-delimited JSON-RPC on this
// process's stdin and stdout. It replaces the SDK's StdioServerTransport, whose zod parse of every
// message and buffer copy per chunk cost time on each forwarded call; it owns no process.
import type { Readable, Writable } from 'node:stream';
import type { Transport } from '@modelcontextprotocol/sdk/shared/transport.js';
import type { JSONRPCMessage } from '@modelcontextprotocol/sdk/types.js';
import { JsonLineReader, JsonLineWriter } from '../shared/index.js';

// As the SDK's stdio server allowed: an agent's requests are small, and a runaway line is not buffered forever.
const MAX_CLIENT_MESSAGE_BYTES = 10 * 1024 * 1024;

/** An MCP server transport over a readable (stdin) and a writable (stdout) stream. */
export class GatewayStdioTransport implements Transport {
  onclose?: () => void;
  onerror?: (error: Error) => void;
  onmessage?: (message: JSONRPCMessage) => void;

  readonly #input: Readable;
  readonly #output: Writable;
  readonly #reader: JsonLineReader;
  readonly #writer: JsonLineWriter;
  #started = false;
  #closed = false;

  constructor(input: Readable = process.stdin, output: Writable = process.stdout, maxMessageBytes = MAX_CLIENT_MESSAGE_BYTES) {
    this.#input = input;
    this.#output = output;
    this.#writer = new JsonLineWriter(output);
    this.#reader = new JsonLineReader(maxMessageBytes, {
      onMessage: (message) => this.onmessage?.(message),
      onError: (error) => this.onerror?.(error),
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
    return Promise.resolve();
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
