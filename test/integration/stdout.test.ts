// stdout belongs to the protocol: drive `loadout serve` over raw pipes (no SDK in between) at
// debug log level through a busy session and check every stdout line is a JSON-RPC message.
import { spawn } from 'node:child_process';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { CLI, THIRD_PARTY, fixture, makeTempDirs, nodeServer, waitForExit, writeServersYaml, type TempDirs } from '../helpers/gateway.js';

type Message = { jsonrpc: string; id?: number; method?: string; result?: unknown; error?: unknown };

describe('loadout serve stdout', () => {
  let dirs: TempDirs;
  beforeEach(async () => {
    dirs = await makeTempDirs();
  });
  afterEach(() => dirs.cleanup());

  it('carries nothing but JSON-RPC messages, even with debug logging and chatty servers', async () => {
    await writeServersYaml(
      dirs.configDir,
      {
        echo: nodeServer(fixture('echo')),
        everything: nodeServer(THIRD_PARTY.everything),
        broken: { command: '/nonexistent/loadout-test' },
      },
      { gateway: { relist_wait_ms: 200 } },
    );
    const child = spawn(process.execPath, [CLI, 'serve', '--config', dirs.configDir, '--data', dirs.dataDir, '--log-level', 'debug'], {
      stdio: ['pipe', 'pipe', 'pipe'],
    });
    let stdout = '';
    let stderr = '';
    child.stdout.on('data', (chunk: Buffer) => (stdout += chunk.toString('utf8')));
    child.stderr.on('data', (chunk: Buffer) => (stderr += chunk.toString('utf8')));
    const messages = (): Message[] =>
      stdout
        .split('\n')
        .filter(Boolean)
        .map((line) => JSON.parse(line) as Message);
    const send = (message: Record<string, unknown>): void => void child.stdin.write(`${JSON.stringify({ jsonrpc: '2.0', ...message })}\n`);
    const answer = async (id: number): Promise<Message> => {
      const deadline = Date.now() + 15_000;
      for (;;) {
        const found = messages().find((m) => m.id === id && (m.result !== undefined || m.error !== undefined));
        if (found) return found;
        if (Date.now() > deadline) throw new Error(`no answer to request ${id}; stderr:\n${stderr}`);
        await new Promise((resolve) => setTimeout(resolve, 20));
      }
    };
    const call = (id: number, name: string, args: Record<string, unknown>): Promise<Message> => {
      send({ id, method: 'tools/call', params: { name, arguments: args } });
      return answer(id);
    };

    send({
      id: 1,
      method: 'initialize',
      params: { protocolVersion: '2025-06-18', capabilities: {}, clientInfo: { name: 'raw', version: '1' } },
    });
    await answer(1);
    send({ method: 'notifications/initialized' });
    send({ id: 2, method: 'tools/list', params: {} });
    await answer(2);
    await call(3, 'discover-all-tools', { query: 'echo' });
    await call(4, 'build-toolset', { name: 'mixed', tools: ['echo.add', 'everything.echo'], equip: true });
    await call(5, 'echo_add', { a: 1, b: 2 });
    await call(6, 'everything_echo', { message: 'hi' });
    await call(7, 'call-tool', { tool: 'everything.get-env' });
    await call(8, 'equip-toolset', { name: 'nope' });
    send({ id: 9, method: 'no/such/method', params: {} });
    await answer(9);
    await call(10, 'unequip-toolset', {});
    child.stdin.end();
    await waitForExit(child.pid!);

    const all = messages();
    expect(all.length).toBeGreaterThan(10);
    for (const message of all) expect(message.jsonrpc).toBe('2.0');
    expect(all.filter((m) => m.method === 'notifications/tools/list_changed')).toHaveLength(2);
    // The logs went to stderr instead, as readable lines (the default format).
    expect(stderr).toMatch(/^loadout: debug \[downstream /m);
  });
});
