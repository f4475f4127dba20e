import { describe, expect, it } from 'vitest';
import { convertServer, defaultImportSources } from './mcpImport.js';

describe('convertServer', () => {
  it('keeps stdio command, args, env and cwd, leaving ${VAR} references as written', () => {
    expect(convertServer('gh', { command: 'npx', args: ['-y', 'gh-mcp'], env: { TOKEN: '${GH_TOKEN}' }, cwd: '/src' })).toEqual({
      command: 'npx',
      args: ['-y', 'gh-mcp'],
      env: { TOKEN: '${GH_TOKEN}' },
      cwd: '/src',
    });
  });

  it('maps http, sse, streamable-http and a bare Cursor url to the right transport', () => {
    expect(convertServer('a', { type: 'http', url: 'https://x/mcp', headers: { A: 'b' } })).toEqual({
      type: 'http',
      url: 'https://x/mcp',
      headers: { A: 'b' },
    });
    expect(convertServer('b', { type: 'sse', url: 'https://x/sse' })).toEqual({ type: 'sse', url: 'https://x/sse' });
    expect(convertServer('c', { type: 'streamable-http', url: 'https://x/mcp' })).toEqual({ type: 'http', url: 'https://x/mcp' });
    expect(convertServer('d', { url: 'https://x/sse' })).toEqual({ type: 'sse', url: 'https://x/sse' });
    expect(convertServer('e', { url: 'https://x/mcp' })).toEqual({ type: 'http', url: 'https://x/mcp' });
  });

  it('carries a disabled flag over as enabled: false', () => {
    expect(convertServer('x', { command: 'x', disabled: true })).toEqual({ command: 'x', enabled: false });
  });

  it('explains why an entry cannot be imported', () => {
    expect(convertServer('x', { type: 'websocket', url: 'ws://x' })).toMatch(/unknown type 'websocket'/);
    expect(convertServer('x', { type: 'stdio' })).toBe('no "command"');
    expect(convertServer('x', { type: 'http' })).toBe('no "url"');
    expect(convertServer('x', 'npx foo')).toMatch(/not a server entry/);
  });

  it('refuses to import loadout into itself', () => {
    expect(convertServer('loadout', { command: 'anything' })).toMatch(/loadout itself/);
    expect(convertServer('gw', { command: 'npx', args: ['-y', 'loadout@latest', 'serve'] })).toMatch(/loadout itself/);
    expect(convertServer('gw', { command: 'node', args: ['/opt/loadout/dist/src/cli/loadout.js', 'serve'] })).toMatch(/loadout itself/);
    expect(convertServer('other', { command: 'npx', args: ['loadout-helper'] })).toEqual({ command: 'npx', args: ['loadout-helper'] });
  });
});

describe('defaultImportSources', () => {
  it('looks in the project, Claude Code, Claude Desktop (per platform) and Cursor, under the given home', () => {
    const linux = defaultImportSources({ home: '/h', cwd: '/p', platform: 'linux' }).map((source) => source.file);
    expect(linux).toEqual(['/p/.mcp.json', '/h/.claude.json', '/h/.config/Claude/claude_desktop_config.json', '/h/.cursor/mcp.json']);
    const mac = defaultImportSources({ home: '/h', cwd: '/p', platform: 'darwin' }).map((source) => source.file);
    expect(mac[2]).toBe('/h/Library/Application Support/Claude/claude_desktop_config.json');
  });
});
