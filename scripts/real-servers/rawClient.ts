// An SDK Client over stdio that keeps each list result as it arrived on the wire: the JSON the
// peer sent, before the SDK's schemas parse (and may reorder or strip) it. Used for both sides of
// the check, a server run directly and the same server behind `loadout serve`.
import { StdioClientTransport } from '@modelcontextprotocol/client/stdio';
import { Client, ProtocolError, ProtocolErrorCode } from '@modelcontextprotocol/client';
import type { Transport, ClientCapabilities, JSONRPCMessage, ServerCapabilities } from '@modelcontextprotocol/client';
import { setTimeout as sleep } from 'node:timers/promises';
import { pathToFileURL } from 'node:url';
import * as z from 'zod';
import type { ListKind } from './compare.js';
import { killSurvivors, processTree, stillRunning } from './processTree.js';

/** The list methods and the result key each one fills. */
export const LIST_METHODS: Record<ListKind, string> = {
  tools: 'tools/list',
  prompts: 'prompts/list',
  resources: 'resources/list',
  resourceTemplates: 'resources/templates/list',
};

// A server that repeats a cursor, or pages without end, must not hang the check.
const MAX_PAGES = 100;

/** What a list request produced: every item of every page, or the failure. */
export type ListOutcome = { ok: true; items: unknown[] } | { ok: false; error: string };

/** How to start the process and what it may ask of its client. */
export interface RawClientOptions {
  command: string;
  args: string[];
  env: Record<string, string>;
  cwd?: string;
  /** What the client declares; a `roots` capability is answered with `root`. */
  capabilities: ClientCapabilities;
  /** The directory offered as the one root (server-filesystem narrows itself to the roots). */
  root: string;
  requestTimeoutMs: number;
}

// Forwards to the stdio transport and records each response by request id.
class RecordingTransport implements Transport {
  onclose?: () => void;
  onerror?: (error: Error) => void;
  onmessage?: Transport['onmessage'];
  readonly responses = new Map<string | number, JSONRPCMessage>();
  lastRequestId: string | number | undefined;
  /** Kept from the start: the SDK forgets it as soon as a close begins. */
  pid: number | undefined;

  constructor(readonly inner: StdioClientTransport) {}

  async start(): Promise<void> {
    this.inner.onmessage = (message: JSONRPCMessage) => {
      if ('id' in message && message.id !== undefined && ('result' in message || 'error' in message))
        this.responses.set(message.id, message);
      this.onmessage?.(message);
    };
    this.inner.onclose = () => this.onclose?.();
    this.inner.onerror = (error) => this.onerror?.(error);
    await this.inner.start();
    this.pid = this.inner.pid ?? undefined;
  }

  send(message: JSONRPCMessage): Promise<void> {
    if ('method' in message && 'id' in message) this.lastRequestId = message.id;
    return this.inner.send(message);
  }

  close(): Promise<void> {
    return this.inner.close();
  }
}

/** A connected client whose list results are the peer's own JSON. */
export class RawClient {
  readonly #client: Client;
  readonly #transport: RecordingTransport;
  readonly #requestTimeoutMs: number;
  #stderr = '';

  private constructor(client: Client, transport: RecordingTransport, requestTimeoutMs: number) {
    this.#client = client;
    this.#transport = transport;
    this.#requestTimeoutMs = requestTimeoutMs;
    transport.inner.stderr?.on('data', (chunk: Buffer) => {
      // Only the tail is ever shown; this bounds a chatty server.
      this.#stderr = (this.#stderr + chunk.toString('utf8')).slice(-20_000);
    });
  }

  /** Start the process and complete the handshake. */
  static async connect(options: RawClientOptions): Promise<RawClient> {
    const inner = new StdioClientTransport({
      command: options.command,
      args: options.args,
      env: options.env,
      ...(options.cwd ? { cwd: options.cwd } : {}),
      stderr: 'pipe',
    });
    const transport = new RecordingTransport(inner);
    const client = new Client({ name: 'loadout-real-servers', version: '1.0.0' }, { capabilities: options.capabilities });
    if (options.capabilities.roots)
      client.setRequestHandler('roots/list', () => ({
        roots: [{ uri: pathToFileURL(options.root).href, name: 'workspace' }],
      }));
    // Listing never needs a model or the user; a server that asks anyway hears no.
    client.setRequestHandler('sampling/createMessage', () => {
      throw new ProtocolError(ProtocolErrorCode.InvalidRequest, 'the real-servers check has no model');
    });
    client.setRequestHandler('elicitation/create', () => ({ action: 'decline' as const }));
    const raw = new RawClient(client, transport, options.requestTimeoutMs);
    try {
      await client.connect(transport, { timeout: options.requestTimeoutMs });
    } catch (error) {
      await raw.close();
      throw new Error(`initialize failed: ${errorText(error)}${raw.stderrTail() ? ` (stderr: ${raw.stderrTail()})` : ''}`);
    }
    return raw;
  }

  /** What the peer declared in its handshake. */
  get capabilities(): ServerCapabilities | undefined {
    return this.#client.getServerCapabilities();
  }

  /** What the peer says about itself in its handshake: serverInfo's title and description, and its instructions. */
  get about(): { title?: string; description?: string; instructions?: string } {
    const info = this.#client.getServerVersion() as { title?: unknown; description?: unknown } | undefined;
    const text = (value: unknown) => (typeof value === 'string' && value.trim() ? value : undefined);
    const about = { title: text(info?.title), description: text(info?.description), instructions: text(this.#client.getInstructions()) };
    return Object.fromEntries(Object.entries(about).filter(([, value]) => value !== undefined));
  }

  /** The last lines the child wrote to stderr, on one line. */
  stderrTail(lines = 3): string {
    return this.#stderr.trim().split('\n').slice(-lines).join(' | ').slice(0, 600);
  }

  /** Every page of a list, each item as the peer sent it. */
  async list(kind: ListKind): Promise<ListOutcome> {
    const items: unknown[] = [];
    let cursor: string | undefined;
    try {
      for (let page = 0; page < MAX_PAGES; page++) {
        const result = await this.rawRequest(LIST_METHODS[kind], cursor === undefined ? {} : { cursor });
        const listed = result[kind];
        if (!Array.isArray(listed)) return { ok: false, error: `the result has no "${kind}" array` };
        items.push(...(listed as unknown[]));
        cursor = typeof result.nextCursor === 'string' && result.nextCursor !== '' ? result.nextCursor : undefined;
        if (cursor === undefined) return { ok: true, items };
      }
      return { ok: false, error: `more than ${MAX_PAGES} pages` };
    } catch (error) {
      return { ok: false, error: errorText(error) };
    }
  }

  /** Call a tool and return the text of its result (the meta-tools answer in text). */
  async callToolText(name: string, args: Record<string, unknown>): Promise<{ text: string; isError: boolean }> {
    const result = await this.rawRequest('tools/call', { name, arguments: args });
    const content = Array.isArray(result.content) ? (result.content as Array<{ type?: unknown; text?: unknown }>) : [];
    const text = content.map((part) => (part.type === 'text' && typeof part.text === 'string' ? part.text : '')).join('\n');
    return { text, isError: result.isError === true };
  }

  // The SDK sends the request (ids, timeouts, cancellation); the result is read from the wire.
  async rawRequest(method: string, params: Record<string, unknown>): Promise<Record<string, unknown>> {
    await this.#client.request({ method, params }, z.unknown(), { timeout: this.#requestTimeoutMs });
    const id = this.#transport.lastRequestId;
    const response = id === undefined ? undefined : this.#transport.responses.get(id);
    if (id !== undefined) this.#transport.responses.delete(id);
    if (!response || !('result' in response)) throw new Error(`no response recorded for ${method}`);
    return response.result;
  }

  /**
   * End the child (stdin first, then SIGTERM, then SIGKILL: the SDK's order) and whatever it
   * started; returns how many processes outlived that and had to be killed.
   */
  async close(): Promise<number> {
    const tree = this.#transport.pid === undefined ? [] : processTree(this.#transport.pid);
    await this.#client.close().catch(() => undefined);
    // loadout ends its children within about a second of its stdin closing; the SDK's own close,
    // which a failed connect starts by itself, signals within two.
    for (let waited = 0; waited < 3000 && stillRunning(tree).length; waited += 100) await sleep(100);
    return killSurvivors(tree);
  }
}

/** A failure in one line: the JSON-RPC code when there is one, then the message. */
export function errorText(error: unknown): string {
  if (error instanceof ProtocolError) return `${error.code} ${error.message.replace(/^MCP error -?\d+: /, '')}`.slice(0, 300);
  return (error instanceof Error ? error.message : String(error)).slice(0, 300);
}
