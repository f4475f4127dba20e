// The downstream stdio transport under an unchanged SDK Client, with real fixture servers as
// children: calls, junk on stdout, early stderr, spawn failures, size limits, and ending a child
// that ignores SIGTERM.
import { Client } from '@modelcontextprotocol/client';
import { writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { afterEach, describe, expect, it } from 'vitest';
import { fixture, isAlive, textOf } from '../../test/helpers/gateway.js';
import { useTempDir } from '../../test/helpers/tempDir.js';
import { ChildProcessTransport, type ChildProcessOptions } from './childProcessTransport.js';

const MEGABYTE = 1024 * 1024;
const tempDir = useTempDir('loadout-transport-');
const clients: Client[] = [];
afterEach(async () => {
  await Promise.allSettled(clients.splice(0).map((client) => client.close()));
});

function nodeChild(args: string[], options: Partial<ChildProcessOptions> = {}): ChildProcessTransport {
  return new ChildProcessTransport({
    command: process.execPath,
    args,
    env: { ...(process.env as Record<string, string>) },
    maxMessageBytes: 256 * MEGABYTE,
    ...options,
  });
}

async function connect(transport: ChildProcessTransport): Promise<Client> {
  const client = new Client({ name: 'test', version: '1.0.0' });
  clients.push(client);
  await client.connect(transport);
  return client;
}

describe('ChildProcessTransport', () => {
  it('spawns the server and carries its handshake, tool list and calls', async () => {
    const transport = nodeChild([fixture('echo')], { env: { ...(process.env as Record<string, string>), MARKER: 'from-env' } });
    const client = await connect(transport);
    expect(client.getServerVersion()?.name).toBe('echo-fixture');
    expect((await client.listTools()).tools.map((tool) => tool.name)).toContain('echo');
    expect(textOf(await client.callTool({ name: 'echo', arguments: { text: 'héllo 😀' } }))).toBe('héllo 😀');
    expect(textOf(await client.callTool({ name: 'env', arguments: { name: 'MARKER' } }))).toBe('from-env');
    expect(textOf(await client.callTool({ name: 'pid', arguments: {} }))).toBe(String(transport.pid));
  });

  it('runs the child in the given directory', async () => {
    const transport = nodeChild(
      ['-e', 'process.stdout.write(JSON.stringify({ jsonrpc: "2.0", method: "cwd", params: { cwd: process.cwd() } }) + "\\n")'],
      { cwd: '/tmp' },
    );
    const message = new Promise((resolve) => {
      transport.onmessage = resolve;
    });
    await transport.start();
    await expect(message).resolves.toMatchObject({ params: { cwd: '/tmp' } });
    await transport.close();
  });

  it('passes a 10 MB result through whole', async () => {
    const client = await connect(nodeChild([fixture('big')]));
    expect(textOf(await client.callTool({ name: 'big', arguments: { mb: 10 } }))).toHaveLength(10 * MEGABYTE);
  });

  it('reports junk lines on stdout and goes on answering', async () => {
    const transport = nodeChild([fixture('garbage')]);
    const errors: string[] = [];
    const client = await connect(transport);
    client.onerror = (error) => errors.push(error.message);
    expect(textOf(await client.callTool({ name: 'echo', arguments: { text: 'still here' } }))).toBe('still here');
    expect(textOf(await client.callTool({ name: 'echo', arguments: { text: 'and here' } }))).toBe('and here');
    expect(errors.some((message) => message.includes('debug: handling echo'))).toBe(true);
  });

  it('offers stderr before start, so nothing the child writes early is lost', async () => {
    const transport = nodeChild(['-e', 'process.stderr.write("early words\\n")']);
    let stderr = '';
    transport.stderr.on('data', (chunk: Buffer) => (stderr += chunk.toString()));
    const closed = new Promise<void>((resolve) => {
      transport.onclose = resolve;
    });
    await transport.start();
    await closed;
    expect(stderr).toBe('early words\n');
  });

  it('says in plain words that a program is not on PATH', async () => {
    const transport = new ChildProcessTransport({ command: 'loadout-no-such-command', args: [], env: {}, maxMessageBytes: MEGABYTE });
    await expect(transport.start()).rejects.toThrow('no program named "loadout-no-such-command" on PATH');
    await transport.close();
  });

  it('names a working directory that does not exist, rather than the program it then cannot find', async () => {
    const cwd = path.join(tmpdir(), 'loadout-no-such-dir', 'x');
    const transport = new ChildProcessTransport({ command: process.execPath, args: [], env: {}, cwd, maxMessageBytes: MEGABYTE });
    await expect(transport.start()).rejects.toThrow(`its working directory ${JSON.stringify(cwd)} (cwd: in servers.yaml) does not exist`);
    await transport.close();
  });

  it('says in plain words that a file cannot be run (EACCES)', async () => {
    const script = path.join(tempDir(), 'server.sh');
    await writeFile(script, '#!/bin/sh\n', { mode: 0o644 });
    const transport = new ChildProcessTransport({ command: script, args: [], env: {}, maxMessageBytes: MEGABYTE });
    await expect(transport.start()).rejects.toThrow(`${JSON.stringify(script)} cannot be run: permission denied: make it executable`);
    await transport.close();
  });

  it('keeps the last stderr lines, secrets masked, and how the child exited', async () => {
    const transport = nodeChild(
      [
        '-e',
        'for (let i = 1; i <= 30; i++) console.error("line " + i); console.error("\\u001b[31mtoken=s3cr3t-v4lue!\\u001b[0m"); process.exit(4)',
      ],
      { masked: [{ name: 'API_TOKEN', value: 's3cr3t-v4lue' }] },
    );
    const closed = new Promise<void>((resolve) => {
      transport.onclose = resolve;
    });
    await transport.start();
    await closed;
    const lines = transport.stderrLines();
    expect(lines).toHaveLength(20);
    expect(lines.at(-2)).toBe('line 30');
    expect(lines.at(-1)).toBe('token=[API_TOKEN hidden]!');
    expect(transport.exit).toBe('exited with code 4');
  });

  it('closes once when the server exits on its own, and later requests fail', async () => {
    const transport = nodeChild([fixture('echo')]);
    let closes = 0;
    const client = await connect(transport);
    const closed = new Promise<void>((resolve) => {
      client.onclose = () => {
        closes++;
        resolve();
      };
    });
    process.kill(transport.pid!, 'SIGKILL');
    await closed;
    await transport.close();
    expect(closes).toBe(1);
    await expect(client.ping()).rejects.toThrow(/Not connected/);
  });

  it('closes the connection when a message outgrows the size limit', async () => {
    const transport = nodeChild(['-e', 'process.stdout.write("x".repeat(4096)); setInterval(() => {}, 1000)'], { maxMessageBytes: 1024 });
    const errors: string[] = [];
    transport.onerror = (error) => errors.push(error.message);
    const closed = new Promise<void>((resolve) => {
      transport.onclose = resolve;
    });
    await transport.start();
    const pid = transport.pid!;
    await closed;
    expect(errors).toContain('A message exceeded the 1024-byte limit; the connection is closed');
    expect(await isAlive(pid)).toBe(false);
  });

  it('ends a server that ignores SIGTERM and outlives its stdin with SIGKILL', async () => {
    const transport = nodeChild([fixture('ignore-sigterm')]);
    let stderr = '';
    transport.stderr.on('data', (chunk: Buffer) => (stderr += chunk.toString()));
    await connect(transport);
    const pid = transport.pid!;
    // A second close() while the first is under way waits for the same ending.
    await Promise.all([transport.close(), transport.close()]);
    expect(await isAlive(pid)).toBe(false);
    expect(stderr).toContain('SIGTERM ignored');
    expect(transport.pid).toBeNull();
  });

  it('refuses to send once closed', async () => {
    const transport = nodeChild([fixture('echo')]);
    await connect(transport);
    await transport.close();
    await expect(transport.send({ jsonrpc: '2.0', id: 1, method: 'ping' })).rejects.toThrow(/Not connected/);
  });
});
