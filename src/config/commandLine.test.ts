// A whole command line in `command` is refused as servers.yaml is read; a program whose path has a space is not.
import { mkdir, writeFile } from 'node:fs/promises';
import path from 'node:path';
import { describe, expect, it } from 'vitest';
import { useTempDir } from '../../test/helpers/tempDir.js';
import { isWholeCommandLine } from './commandLine.js';
import { parseServersFile } from './serversFile.js';

const FILE = '/cfg/servers.yaml';

describe('a whole command line in command', () => {
  const dir = useTempDir('loadout-command-line-');

  it('is refused at its line and column with the split entry, and the other servers still read', () => {
    const { config, brokenServers } = parseServersFile(
      'servers:\n  fetch:\n    command: "uvx mcp-server-fetch"\n    args: [--port, "1"]\n  ok:\n    command: node\n',
      FILE,
      { skipBrokenServers: true },
    );
    expect(Object.keys(config.servers)).toEqual(['ok']);
    expect(brokenServers.get('fetch')).toBe(
      '/cfg/servers.yaml:3:14: "uvx mcp-server-fetch" is a whole command line; `command` is the program alone and `args` its arguments: write command: "uvx" and args: ["mcp-server-fetch","--port","1"] at servers.fetch.command',
    );
  });

  it('is not a program whose own path has a space in it, at its path, against cwd or on PATH', async () => {
    const folder = path.join(dir(), 'My Tools');
    await mkdir(folder);
    await writeFile(path.join(folder, 'my server'), '');
    expect(isWholeCommandLine(path.join(folder, 'my server'), undefined)).toBe(false);
    expect(isWholeCommandLine('My Tools/my server', dir())).toBe(false);
    expect(isWholeCommandLine('my server', undefined, { PATH: folder })).toBe(false);
    expect(isWholeCommandLine(path.join(folder, 'my server --stdio'), undefined)).toBe(true);
    expect(isWholeCommandLine('my server', undefined, { PATH: dir() })).toBe(true);
  });

  it('leaves one word, and a ${VAR} only known at start, to the start', () => {
    expect(isWholeCommandLine('node', undefined)).toBe(false);
    expect(isWholeCommandLine('${TOOL} --flag', undefined)).toBe(false);
    expect(isWholeCommandLine('  node  ', undefined)).toBe(false);
  });
});
