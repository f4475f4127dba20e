// loadout in front of the real third-party servers (server-memory, server-filesystem,
// server-everything): exposed definitions equal what each server lists to a direct client,
// and calls to each return the server's own result.
import { StdioClientTransport } from '@modelcontextprotocol/client/stdio';
import { Client } from '@modelcontextprotocol/client';
import type { ClientCapabilities } from '@modelcontextprotocol/client';
import { mkdir, readFile } from 'node:fs/promises';
import path from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { CLIENT_CAPABILITIES } from '../../src/downstream/index.js';
import {
  THIRD_PARTY,
  descendantsOf,
  makeTempDirs,
  nodeServer,
  rawToolsOf,
  startGateway,
  textOf,
  waitForExit,
  writeServersYaml,
  type GatewayProcess,
  type RawTool,
  type TempDirs,
} from '../helpers/gateway.js';

/** What a server lists to a client connecting directly (no loadout in between). */
async function listedDirectly(args: string[], env: Record<string, string>, capabilities: ClientCapabilities): Promise<RawTool[]> {
  const client = new Client({ name: 'direct', version: '1.0.0' }, { capabilities });
  await client.connect(
    new StdioClientTransport({
      command: process.execPath,
      args,
      env: { ...(process.env as Record<string, string>), ...env },
      stderr: 'ignore',
    }),
  );
  try {
    return await rawToolsOf(client);
  } finally {
    await client.close();
  }
}

describe('loadout in front of server-memory, server-filesystem and server-everything', () => {
  let dirs: TempDirs;
  let gateway: GatewayProcess;
  let exposed: RawTool[];
  let files: string;
  let memoryFile: string;

  beforeAll(async () => {
    dirs = await makeTempDirs();
    files = path.join(dirs.root, 'files');
    await mkdir(files);
    memoryFile = path.join(dirs.root, 'memory.jsonl');
    await writeServersYaml(dirs.configDir, {
      memory: nodeServer(THIRD_PARTY.memory, { env: { MEMORY_FILE_PATH: memoryFile } }),
      files: nodeServer(THIRD_PARTY.filesystem, { args: [THIRD_PARTY.filesystem, files] }),
      everything: nodeServer(THIRD_PARTY.everything),
    });
    gateway = await startGateway({ dirs });
    const equipped = await gateway.client.callTool({ name: 'equip-toolset', arguments: { name: 'all' } });
    expect(equipped.isError).toBeFalsy();
    exposed = await rawToolsOf(gateway.client);
  });
  afterAll(async () => {
    await gateway.close();
    await dirs.cleanup();
  });

  it('exposes server-memory tools exactly as the server lists them', async () => {
    const own = await listedDirectly([THIRD_PARTY.memory], { MEMORY_FILE_PATH: memoryFile }, {});
    expect(own.length).toBeGreaterThan(5);
    expect(exposed.filter((t) => t.name.startsWith('memory_'))).toEqual(own.map((t) => ({ ...t, name: `memory_${t.name}` })));
  });

  it('exposes server-filesystem tools exactly as the server lists them', async () => {
    const own = await listedDirectly([THIRD_PARTY.filesystem, files], {}, {});
    expect(own.length).toBeGreaterThan(5);
    expect(exposed.filter((t) => t.name.startsWith('files_'))).toEqual(own.map((t) => ({ ...t, name: `files_${t.name}` })));
  });

  it('exposes server-everything tools exactly as it lists them to a client with the same capabilities', async () => {
    // server-everything adds tools for clients declaring sampling, elicitation or roots; compare
    // with a direct client declaring exactly what loadout's downstream client declares.
    const own = await listedDirectly([THIRD_PARTY.everything], {}, CLIENT_CAPABILITIES);
    const ours = exposed.filter((t) => t.name.startsWith('everything_'));
    expect(ours).toEqual(own.map((t) => ({ ...t, name: `everything_${t.name}` })));
    expect(ours.some((t) => t.outputSchema && t.annotations && t.title)).toBe(true);
  });

  it('calls server-memory and returns its result unchanged', async () => {
    const created = await gateway.client.callTool({
      name: 'memory_create_entities',
      arguments: { entities: [{ name: 'loadout', entityType: 'project', observations: ['an MCP gateway'] }] },
    });
    expect(created.isError).toBeFalsy();
    const graph = await gateway.client.callTool({ name: 'memory_read_graph', arguments: {} });
    expect(graph.structuredContent).toMatchObject({
      entities: [{ name: 'loadout', entityType: 'project', observations: ['an MCP gateway'] }],
    });
    expect(await readFile(memoryFile, 'utf8')).toContain('an MCP gateway');
  });

  it('calls server-filesystem inside its allowed directory, and passes its refusal outside it through as isError', async () => {
    const target = path.join(files, 'note.txt');
    const written = await gateway.client.callTool({ name: 'files_write_file', arguments: { path: target, content: 'hello from loadout' } });
    expect(written.isError).toBeFalsy();
    expect(await readFile(target, 'utf8')).toBe('hello from loadout');
    const read = await gateway.client.callTool({
      name: 'call-tool',
      arguments: { tool: 'files.read_text_file', arguments: { path: target } },
    });
    expect(textOf(read)).toBe('hello from loadout');
    const outside = await gateway.client.callTool({ name: 'files_read_text_file', arguments: { path: '/etc/hostname' } });
    expect(outside.isError).toBe(true);
    expect(textOf(outside)).toMatch(/denied|outside|not allowed/i);
  });

  it('calls server-everything, structured content included', async () => {
    const echo = await gateway.client.callTool({ name: 'everything_echo', arguments: { message: 'ping' } });
    expect(textOf(echo)).toContain('ping');
    const structured = await gateway.client.callTool({ name: 'everything_get-structured-content', arguments: { location: 'New York' } });
    expect(structured.isError).toBeFalsy();
    expect(structured.structuredContent).toBeDefined();
    const sum = await gateway.client.callTool({ name: 'call-tool', arguments: { tool: 'everything.get-sum', arguments: { a: 2, b: 3 } } });
    expect(textOf(sum)).toContain('5');
  });

  it("passes the server's progress notifications through to the client", async () => {
    const progress: Array<{ progress: number; total?: number }> = [];
    const result = await gateway.client.callTool(
      { name: 'everything_trigger-long-running-operation', arguments: { duration: 1, steps: 3 } },
      {
        onprogress: (update) => progress.push(update),
      },
    );
    expect(textOf(result)).toContain('Long running operation completed');
    expect(progress.length).toBeGreaterThan(0);
    expect(progress.every((update) => update.total === 3)).toBe(true);
  });

  it('passes a downstream argument error through as isError and stays up', async () => {
    const bad = await gateway.client.callTool({ name: 'everything_get-sum', arguments: { a: 'two' } });
    expect(bad.isError).toBe(true);
    expect(textOf(bad).length).toBeGreaterThan(0);
    expect((await gateway.client.callTool({ name: 'everything_echo', arguments: { message: 'after' } })).isError).toBeFalsy();
  });

  it('ends every downstream process when the client goes away', async () => {
    const children = await descendantsOf(gateway.pid);
    expect(children.length).toBeGreaterThanOrEqual(3);
    await gateway.close();
    for (const child of children) await waitForExit(child);
  });
});
