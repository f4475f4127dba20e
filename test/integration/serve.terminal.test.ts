import { spawn, spawnSync } from 'node:child_process';
import path from 'node:path';
import { describe, expect, it } from 'vitest';
import { CLIENT_NAMES } from '../../src/cli/clients/clientFiles.js';
import { terminalNotice } from '../../src/cli/commands/serve.js';
import { CLI, eventually, fixture, nodeServer, useGatewaySandbox, waitForExit, writeServersYaml } from '../helpers/gateway.js';

// `script` (util-linux) runs a command on a pseudo-terminal: the nearest thing to a person typing `loadout serve`.
const hasScript = spawnSync('script', ['--version']).status === 0;

describe('loadout serve in a terminal', () => {
  const sandbox = useGatewaySandbox();

  it.skipIf(!hasScript)('says in one stderr line what it waits for and how to add it to a client, and stops on Ctrl-C', async () => {
    const { configDir, dataDir, root } = sandbox.dirs;
    await writeServersYaml(configDir, { echo: nodeServer(fixture('echo')) });
    const command = [process.execPath, CLI, '--config', configDir, '--data', dataDir, 'serve'].map(quote).join(' ');
    const terminal = spawn('script', ['-qfec', command, '/dev/null'], {
      cwd: root,
      env: { ...process.env, HOME: path.join(root, 'home'), NO_COLOR: '1' },
      stdio: ['pipe', 'pipe', 'pipe'],
    });
    let output = '';
    terminal.stdout.on('data', (chunk: Buffer) => (output += chunk.toString('utf8')));
    try {
      await eventually(() => output.includes('waiting for an MCP client'), 15_000, 'the terminal notice');
      const lines = output.split(/\r?\n/).filter((line) => line.includes('loadout:'));
      expect(lines).toHaveLength(1);
      expect(lines[0]).toMatch(/waiting for an MCP client on stdin/);
      expect(lines[0]).toContain('"loadout setup claude-code" adds it to Claude Code');
      // Ctrl-C on the terminal stops it.
      terminal.stdin.write('\x03');
      await waitForExit(terminal.pid!, 10_000);
    } finally {
      if (terminal.exitCode === null) terminal.kill('SIGKILL');
    }
  });

  it('decides by whether stdin is a terminal', () => {
    // What the README's install section says: setup adds loadout to the client as it should be
    // added (user scope, alwaysLoad), where a bare `claude mcp add` adds it to one project only.
    expect(terminalNotice(true)).toContain('"loadout setup claude-code" adds it to Claude Code');
    expect(terminalNotice(true)).not.toContain('claude mcp add');
    for (const client of CLIENT_NAMES) expect(terminalNotice(true)).toContain(client);
    expect(terminalNotice(false)).toBeUndefined();
    expect(terminalNotice(undefined)).toBeUndefined();
  });

  it('prints nothing of the kind when stdin is a pipe (a client started it)', async () => {
    await writeServersYaml(sandbox.dirs.configDir, { echo: nodeServer(fixture('echo')) });
    const gateway = await sandbox.start();
    await gateway.client.listTools();
    expect(gateway.stderr()).not.toContain('loadout setup');
    expect(gateway.stderr()).not.toContain('waiting for an MCP client');
  });
});

function quote(word: string): string {
  return `'${word.replaceAll("'", "'\\''")}'`;
}
