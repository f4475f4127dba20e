// The gateway's stdio transport under an unchanged SDK Server, with streams standing in for
// stdin and stdout: requests answered, junk lines survived, and the client's end closing it.
import { PassThrough } from 'node:stream';
import { Server } from '@modelcontextprotocol/server';
import { Client } from '@modelcontextprotocol/client';
import { afterEach, describe, expect, it, vi } from 'vitest';
import { GatewayStdioTransport } from './stdioTransport.js';

interface Wired {
  stdin: PassThrough;
  stdout: PassThrough;
  transport: GatewayStdioTransport;
  server: Server;
  client: Client;
  errors: string[];
}

const opened: Wired[] = [];
afterEach(async () => {
  await Promise.allSettled(opened.splice(0).map(({ client, server }) => Promise.all([client.close(), server.close()])));
});

// The client talks to the server through the same class over the crossed streams: it is only a line transport.
async function wire(): Promise<Wired> {
  const stdin = new PassThrough();
  const stdout = new PassThrough();
  const transport = new GatewayStdioTransport(stdin, stdout);
  const errors: string[] = [];
  const server = new Server({ name: 'test-server', version: '1.0.0' }, { capabilities: { tools: {} } });
  server.setRequestHandler('tools/list', () => ({ tools: [{ name: 'echo', inputSchema: { type: 'object' } }] }));
  server.onerror = (error) => errors.push(error.message);
  await server.connect(transport);
  const client = new Client({ name: 'test-client', version: '1.0.0' });
  await client.connect(new GatewayStdioTransport(stdout, stdin));
  const wired = { stdin, stdout, transport, server, client, errors };
  opened.push(wired);
  return wired;
}

function untilClosed(server: Server): Promise<void> {
  return new Promise((resolve) => {
    server.onclose = resolve;
  });
}

describe('GatewayStdioTransport', () => {
  it('carries the handshake and requests of an SDK Server', async () => {
    const { client } = await wire();
    expect(client.getServerVersion()?.name).toBe('test-server');
    expect((await client.listTools()).tools.map((tool) => tool.name)).toEqual(['echo']);
    await expect(client.ping()).resolves.toEqual({});
  });

  it('reports a line that is not JSON-RPC and goes on answering', async () => {
    const { stdin, client, errors } = await wire();
    stdin.write('this is not JSON\n{"no":"jsonrpc"}\n');
    expect((await client.listTools()).tools).toHaveLength(1);
    expect(errors).toEqual([expect.stringMatching(/not JSON/), expect.stringMatching(/not a JSON-RPC 2\.0 message/)]);
  });

  it('closes when the client ends its stdin', async () => {
    const { stdin, server } = await wire();
    const closed = untilClosed(server);
    stdin.end();
    await closed;
  });

  it('answers a request that outgrows the limit with -32600 naming it, and goes on reading', async () => {
    const stdin = new PassThrough();
    const stdout = new PassThrough();
    const transport = new GatewayStdioTransport(stdin, stdout, 64);
    const errors: string[] = [];
    const messages: unknown[] = [];
    transport.onerror = (error) => errors.push(error.message);
    transport.onmessage = (message) => messages.push(message);
    await transport.start();
    const answers: unknown[] = [];
    stdout.on('data', (chunk: Buffer) =>
      answers.push(
        ...chunk
          .toString('utf8')
          .trim()
          .split('\n')
          .map((text) => JSON.parse(text) as unknown),
      ),
    );
    // The SDK's order puts the id last; other clients put it first; a notification gets no answer.
    const idLast = `{"method":"tools/call","params":{"text":"${'x'.repeat(100)}"},"jsonrpc":"2.0","id":7}`;
    const idFirst = `{"jsonrpc":"2.0","id":"a-1","method":"tools/call","params":{"text":"${'x'.repeat(100)}"}}`;
    stdin.write(`${idLast}\n`);
    stdin.write(idFirst.slice(0, 70));
    stdin.write(`${idFirst.slice(70)}\n`);
    stdin.write(`{"jsonrpc":"2.0","method":"notifications/progress","params":{"text":"${'x'.repeat(100)}"}}\n`);
    stdin.write('{"jsonrpc":"2.0","id":8,"method":"ping"}\n');
    await vi.waitFor(() => expect(messages).toHaveLength(1));
    expect(messages).toEqual([{ jsonrpc: '2.0', id: 8, method: 'ping' }]);
    const refusal = (id: unknown, bytes: number) => ({
      jsonrpc: '2.0',
      id,
      error: {
        code: -32600,
        message: `Message of ${bytes} bytes exceeds the 64-byte limit on one stdio message (MAX_CLIENT_MESSAGE_BYTES); it was discarded`,
      },
    });
    expect(answers).toEqual([refusal(7, idLast.length), refusal('a-1', idFirst.length)]);
    expect(errors).toHaveLength(3);
    await transport.close();
  });

  it('settles `closed` on any close, so serve can stop with it', async () => {
    const stdin = new PassThrough();
    const transport = new GatewayStdioTransport(stdin, new PassThrough());
    await transport.start();
    stdin.emit('close');
    await transport.closed;
  });

  it('detaches from the streams on close, pauses stdin, and refuses to send after', async () => {
    const stdin = new PassThrough();
    const stdout = new PassThrough();
    const transport = new GatewayStdioTransport(stdin, stdout);
    let closes = 0;
    transport.onclose = () => closes++;
    await transport.start();
    await transport.close();
    await transport.close();
    expect(closes).toBe(1);
    expect(['data', 'end', 'close', 'error'].map((event) => stdin.listenerCount(event))).toEqual([0, 0, 0, 0]);
    expect(stdout.listenerCount('error')).toBe(0);
    expect(stdin.isPaused()).toBe(true);
    await expect(transport.send({ jsonrpc: '2.0', id: 1, method: 'ping' })).rejects.toThrow(/Not connected/);
  });

  it('passes an error writing stdout (the client went away) to onerror instead of crashing', async () => {
    const stdout = new PassThrough();
    const transport = new GatewayStdioTransport(new PassThrough(), stdout);
    const errors: string[] = [];
    transport.onerror = (error) => errors.push(error.message);
    await transport.start();
    stdout.emit('error', new Error('write EPIPE'));
    expect(errors).toEqual(['write EPIPE']);
    await transport.close();
  });
});
