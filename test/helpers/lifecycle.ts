// Test helpers for server lifecycle tests: a per-test sandbox (temp dirs + gateways closed
// afterwards), a warm tool cache written straight into the data dir, and calls through call-tool.
import { StdioClientTransport } from '@modelcontextprotocol/client/stdio';
import { Client } from '@modelcontextprotocol/client';
import type { Tool } from '@modelcontextprotocol/client';
import { writeFile } from 'node:fs/promises';
import path from 'node:path';
import { textOf, type GatewayProcess } from './gateway.js';

/** Write `<dataDir>/catalog.json` as discovery would have (the format of src/catalog/definitionCache.ts). */
export async function writeToolCache(dataDir: string, servers: Record<string, Tool[]>): Promise<string> {
  const file = path.join(dataDir, 'catalog.json');
  const discoveredAt = new Date().toISOString();
  const entries = Object.fromEntries(Object.entries(servers).map(([server, tools]) => [server, { discoveredAt, tools }]));
  await writeFile(file, JSON.stringify({ version: 1, servers: entries }));
  return file;
}

/**
 * The real tool definitions of a fixture server (started once, here), for a warm cache that
 * matches what the server will list: a running gateway re-lists each server it starts, and a
 * cache that differs would be updated and announced with a list_changed of its own.
 */
export async function toolsOfFixture(script: string, env: Record<string, string> = {}): Promise<Tool[]> {
  const client = new Client({ name: 'loadout-test', version: '1.0.0' });
  await client.connect(
    new StdioClientTransport({ command: process.execPath, args: [script], env: { ...(process.env as Record<string, string>), ...env } }),
  );
  try {
    return (await client.listTools()).tools;
  } finally {
    await client.close();
  }
}

/** A cached tool definition with an empty object schema. */
export function cachedTool(name: string, description = `The ${name} tool.`): Tool {
  return { name, description, inputSchema: { type: 'object', properties: {} } };
}

/** Call `server.tool` through call-tool. */
export async function callThrough(gateway: GatewayProcess, tool: string, args: Record<string, unknown> = {}) {
  return gateway.client.callTool({ name: 'call-tool', arguments: { tool, arguments: args } });
}

/** The pid a fixture's `pid` tool reports, through call-tool. */
export async function pidOf(gateway: GatewayProcess, server: string): Promise<number> {
  const result = await callThrough(gateway, `${server}.pid`);
  if (result.isError) throw new Error(`${server}.pid failed: ${textOf(result)}`);
  return Number(textOf(result));
}

/** Names in the gateway's current tools/list. */
export async function listedNames(gateway: GatewayProcess): Promise<string[]> {
  return (await gateway.client.listTools()).tools.map((tool) => tool.name);
}
