// servers.yaml parsing: defaults, and errors that name file, line and column.
import { readFile, writeFile } from 'node:fs/promises';
import path from 'node:path';
import { describe, expect, it } from 'vitest';
import type { Document } from 'yaml';
import { useTempDir } from '../../test/helpers/tempDir.js';
import { parseServersFile, updateServersFile } from './serversFile.js';

const FILE = '/cfg/servers.yaml';

function errorOf(text: string): string {
  try {
    parseServersFile(text, FILE);
  } catch (error) {
    return (error as Error).message;
  }
  throw new Error('expected a parse error');
}

describe('parseServersFile', () => {
  it('reads servers with command, args, env and cwd, and fills defaults', () => {
    const { config } = parseServersFile(
      'servers:\n  git:\n    command: node\n    args: [git.js]\n    env: { TOKEN: "${TOKEN}" }\n    cwd: /tmp\n',
      FILE,
    );
    expect(config.servers.git).toMatchObject({ command: 'node', args: ['git.js'], env: { TOKEN: '${TOKEN}' }, cwd: '/tmp', enabled: true });
    expect(config.gateway.relist_wait_ms).toBe(2000);
    expect(config.gateway.client_key).toBe('loadout');
  });

  it('accepts an empty file and an empty servers key', () => {
    expect(parseServersFile('', FILE).config.servers).toEqual({});
    expect(parseServersFile('servers:\n', FILE).config.servers).toEqual({});
  });

  it('names file, line and column for malformed YAML', () => {
    expect(errorOf('servers:\n  git:\n    command: node\n    args: [a, b\n')).toMatch(/^\/cfg\/servers\.yaml:\d+:\d+: /);
    expect(errorOf('servers:\n  git: {command: node\n')).toMatch(/^\/cfg\/servers\.yaml:\d+:\d+: /);
  });

  it('names the line of an unknown key', () => {
    expect(errorOf('servers:\n  git:\n    command: node\n    comand: typo\n')).toBe(
      "/cfg/servers.yaml:4:5: unknown key 'comand' (did you mean 'command'?) at servers.git",
    );
    expect(errorOf('servers: {}\nsrevers: {}\n')).toMatch(/^\/cfg\/servers\.yaml:2:1: unknown key 'srevers' \(did you mean 'servers'\?\)$/);
  });

  it('names the line of a wrongly typed value', () => {
    expect(errorOf('servers:\n  git:\n    command: node\n    args: notalist\n')).toMatch(
      /^\/cfg\/servers\.yaml:4:\d+: .* at servers\.git\.args$/,
    );
  });

  it('points at the server that lacks a command', () => {
    expect(errorOf('servers:\n  ok:\n    command: node\n  broken:\n    args: [x]\n')).toMatch(
      /^\/cfg\/servers\.yaml:5:\d+: a stdio server needs "command" at servers\.broken\.command$/,
    );
  });

  it('infers an omitted type from url or command, and keeps transport fields to their transport', () => {
    const { config } = parseServersFile(
      'servers:\n  local:\n    command: node\n  remote:\n    url: http://127.0.0.1:1/mcp\n  events:\n    type: sse\n    url: http://127.0.0.1:1/sse\n',
      FILE,
    );
    expect(config.servers.local).toMatchObject({ type: 'stdio', command: 'node', args: [], env: {} });
    expect(config.servers.remote).toMatchObject({ type: 'http', url: 'http://127.0.0.1:1/mcp', headers: {} });
    expect(config.servers.events).toMatchObject({ type: 'sse', url: 'http://127.0.0.1:1/sse' });
    expect(errorOf('servers:\n  remote:\n    type: http\n')).toMatch(/: a http server needs "url" at servers\.remote\.url$/);
    expect(errorOf('servers:\n  remote:\n    url: http://127.0.0.1:1/mcp\n    args: [x]\n')).toMatch(
      /unknown key 'args' at servers\.remote$/,
    );
  });

  it('reads credentials: per-user on an HTTP server and refuses it, in one line, where no OAuth can be', () => {
    const { config } = parseServersFile('servers:\n  github:\n    url: http://127.0.0.1:1/mcp\n    credentials: per-user\n', FILE);
    expect(config.servers.github).toMatchObject({ type: 'http', credentials: 'per-user' });
    expect(parseServersFile('servers:\n  linear:\n    url: http://127.0.0.1:1/mcp\n', FILE).config.servers.linear).toMatchObject({
      credentials: 'shared',
    });
    expect(errorOf('servers:\n  git:\n    command: node\n    credentials: per-user\n')).toBe(
      '/cfg/servers.yaml:4:18: credentials applies to HTTP and SSE servers only: a stdio server has no OAuth for each user to bring at servers.git.credentials',
    );
    expect(errorOf('servers:\n  github:\n    url: http://127.0.0.1:1/mcp\n    oauth: false\n    credentials: per-user\n')).toMatch(
      /^\/cfg\/servers\.yaml:\d+:\d+: credentials: per-user needs OAuth: remove oauth: false and any Authorization header at servers\.github\.credentials$/,
    );
    expect(errorOf('servers:\n  github:\n    url: http://127.0.0.1:1/mcp\n    credentials: everyone\n')).toMatch(
      /at servers\.github\.credentials$/,
    );
  });

  it('refuses a server name with a dot (it would break server.tool)', () => {
    expect(errorOf('servers:\n  my.server:\n    command: node\n')).toMatch(/^\/cfg\/servers\.yaml:\d+:\d+: /);
  });

  it('refuses an unknown gateway setting', () => {
    expect(errorOf('gateway:\n  relist_wait: 10\n')).toBe(
      "/cfg/servers.yaml:2:3: unknown key 'relist_wait' (did you mean 'relist_wait_ms'?) at gateway",
    );
  });
});

describe('updateServersFile', () => {
  const tempDir = useTempDir('loadout-serversfile-');
  const BROKEN = 'servers:\n  ok:\n    command: node\n  typo:\n    comand: node\n';

  it('with skipBrokenServers, edits around an invalid entry and hands the edit only the valid servers', async () => {
    const file = path.join(tempDir(), 'servers.yaml');
    await writeFile(file, BROKEN);
    const seen: string[] = [];
    const config = await updateServersFile(
      file,
      (document, valid) => {
        seen.push(...Object.keys(valid.servers));
        document.setIn(['servers', 'ok', 'args'], ['x.js']);
      },
      { skipBrokenServers: true },
    );
    expect(seen).toEqual(['ok']);
    expect(config.servers.ok).toMatchObject({ args: ['x.js'] });
    expect(await readFile(file, 'utf8')).toContain('  typo:\n    comand: node\n');
  });

  it('refuses an edit that breaks another entry, and writes nothing', async () => {
    const file = path.join(tempDir(), 'servers.yaml');
    await writeFile(file, BROKEN);
    const edit = (document: Document) => document.setIn(['servers', 'ok', 'comand'], 'node');
    await expect(updateServersFile(file, edit, { skipBrokenServers: true })).rejects.toThrow(
      /servers\.yaml:\d+:\d+: unknown key 'comand'.* at servers\.ok$/,
    );
    await expect(updateServersFile(file, () => undefined)).rejects.toMatchObject({ code: 'CONFIG_INVALID' });
    expect(await readFile(file, 'utf8')).toBe(BROKEN);
  });
});
