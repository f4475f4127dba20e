import { describe, expect, it } from 'vitest';
import { codexServersAsMcp, parseTomlText, setTomlTable } from './tomlFile.js';

const FILE = '/home/me/.codex/config.toml';

describe('setTomlTable', () => {
  it("removes a table with its sub-tables and its own comment, keeping the comment written above the next table's header", () => {
    const text = [
      'model = "o4"',
      '',
      '# memory, moved to loadout',
      '[mcp_servers.memory]',
      'command = "npx"',
      '',
      '[mcp_servers.memory.env]',
      'TOKEN = "x"',
      '',
      '# GitHub, kept where it is',
      '[mcp_servers.github]',
      'command = "gh-mcp"',
      '',
    ].join('\n');
    expect(setTomlTable(FILE, text, ['mcp_servers', 'memory'], undefined)).toBe(
      ['model = "o4"', '', '# GitHub, kept where it is', '[mcp_servers.github]', 'command = "gh-mcp"', ''].join('\n'),
    );
  });

  it('takes a comment of the removed table separated from the next header by a blank line with it', () => {
    const text = [
      '[mcp_servers.memory]',
      'command = "npx"',
      '# args = ["--old"]',
      '',
      '[mcp_servers.github]',
      'command = "gh-mcp"',
      '',
    ].join('\n');
    expect(setTomlTable(FILE, text, ['mcp_servers', 'memory'], undefined)).toBe('[mcp_servers.github]\ncommand = "gh-mcp"\n');
  });

  it('adds a table at the end, leaving comments and other settings as they were', () => {
    const text = '# my settings\nmodel = "o4"\n';
    const next = setTomlTable(FILE, text, ['mcp_servers', 'loadout'], { command: 'loadout', args: ['serve'] });
    expect(next.startsWith(text)).toBe(true);
    expect(parseTomlText(FILE, next)).toEqual({ model: 'o4', mcp_servers: { loadout: { command: 'loadout', args: ['serve'] } } });
  });

  it('refuses an edit that would change anything but the one table', () => {
    const text = 'mcp_servers = { memory = { command = "npx" } }\n';
    expect(() => setTomlTable(FILE, text, ['mcp_servers', 'memory'], undefined)).toThrow(/is not written as a table of its own/);
  });

  it('names the line and column of a file it cannot parse', () => {
    expect(() => parseTomlText(FILE, 'model = \n')).toThrow(
      /^\/home\/me\/\.codex\/config\.toml:1:\d+: .*loadout does not change a file it cannot parse$/,
    );
  });
});

describe('codexServersAsMcp', () => {
  it("reads Codex's headers, bearer variable and enabled = false in the other clients' shape", () => {
    expect(
      codexServersAsMcp({ api: { url: 'https://x/mcp', http_headers: { 'X-A': '1' }, bearer_token_env_var: 'API_TOKEN', enabled: false } }),
    ).toEqual({ api: { url: 'https://x/mcp', headers: { 'X-A': '1', Authorization: 'Bearer ${API_TOKEN}' }, disabled: true } });
  });
});
