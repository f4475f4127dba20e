// A 2026-07-28 client's calls of equipped tools over raw stdio: a call that the SDK's stdio entry
// passes on (the first one, before the entry has pinned the connection, or one pipelined behind a
// message the entry still holds) and the same call taken off the wire in front of the entry
// (modernCallPath.ts) are answered with the same bytes; a call taken there can be cancelled.
import { spawn } from 'node:child_process';
import { readFile } from 'node:fs/promises';
import path from 'node:path';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { CLI, eventually, fixture, makeTempDirs, nodeServer, waitForExit, writeServersYaml, type TempDirs } from '../helpers/gateway.js';

const ENVELOPE = {
  'io.modelcontextprotocol/protocolVersion': '2026-07-28',
  'io.modelcontextprotocol/clientInfo': { name: 'raw', version: '1' },
  'io.modelcontextprotocol/clientCapabilities': {},
};

/** `loadout serve` over raw pipes, keeping every stdout line as written. */
function startRaw(dirs: TempDirs) {
  const args = [CLI, 'serve', '--config', dirs.configDir, '--data', dirs.dataDir, '--equip', 'all'];
  const child = spawn(process.execPath, args, { stdio: ['pipe', 'pipe', 'pipe'] });
  const lines: string[] = [];
  const waiters = new Set<() => void>();
  let partial = '';
  let stderr = '';
  child.stderr.on('data', (chunk: Buffer) => (stderr += chunk.toString('utf8')));
  child.stdout.on('data', (chunk: Buffer) => {
    const parts = (partial + chunk.toString('utf8')).split('\n');
    partial = parts.pop()!;
    lines.push(...parts);
    for (const wake of [...waiters]) wake();
  });
  const lineOf = (id: number | string): string | undefined =>
    lines.find((line) => {
      const message = JSON.parse(line) as { id?: unknown; method?: string };
      return message.id === id && message.method === undefined;
    });
  return {
    lineOf,
    /** Write `messages` in one write, as a client pipelining them does. */
    write: (...messages: object[]) => void child.stdin.write(messages.map((m) => `${JSON.stringify({ jsonrpc: '2.0', ...m })}\n`).join('')),
    /** The answer line of request `id`, as it was written. */
    answer: (id: number | string): Promise<string> =>
      new Promise((resolve, reject) => {
        const timer = setTimeout(() => {
          waiters.delete(check);
          reject(new Error(`no answer to ${id}; stderr:\n${stderr}`));
        }, 15_000);
        const check = (): void => {
          const line = lineOf(id);
          if (line === undefined) return;
          clearTimeout(timer);
          waiters.delete(check);
          resolve(line);
        };
        waiters.add(check);
        check();
      }),
    async close() {
      child.stdin.end();
      await waitForExit(child.pid!);
    },
  };
}

const call = (id: number, name: string, args: Record<string, unknown>) => ({
  id,
  method: 'tools/call',
  params: { name, arguments: args, _meta: ENVELOPE },
});
// The answer line with its id left out, to compare two answers to the same call.
const withoutId = (line: string, id: number) => line.replace(`"id":${id}`, '"id":_');

describe('a 2026-07-28 call of an equipped tool on stdio', () => {
  let dirs: TempDirs;
  beforeEach(async () => {
    dirs = await makeTempDirs();
    await writeServersYaml(dirs.configDir, {
      echo: nodeServer(fixture('echo')),
      era: { command: process.execPath, args: [fixture('eraServer'), '--era', 'legacy', '--log', path.join(dirs.dataDir, 'era.log')] },
    });
  });
  afterEach(() => dirs.cleanup());

  it('is answered with the same bytes whether the SDK entry passed it on or not, and can be cancelled', async () => {
    const gateway = startRaw(dirs);
    try {
      gateway.write({ id: 'discover', method: 'server/discover', params: { _meta: ENVELOPE } });
      expect(JSON.parse(await gateway.answer('discover'))).toHaveProperty('result.supportedVersions');

      // Through the entry: the first call pins the connection; the second waits behind a list the entry holds.
      gateway.write(call(1, 'echo_echo', { text: 'same bytes' }));
      const throughEntry = [await gateway.answer(1)];
      gateway.write({ id: 'list', method: 'tools/list', params: { _meta: ENVELOPE } }, call(2, 'echo_fail', {}));
      throughEntry.push(await gateway.answer(2));
      await gateway.answer('list');

      // Off the wire: the same calls once the entry has nothing of the client's left.
      gateway.write(call(3, 'echo_echo', { text: 'same bytes' }));
      const direct = [await gateway.answer(3)];
      gateway.write(call(4, 'echo_fail', {}));
      direct.push(await gateway.answer(4));

      expect(withoutId(direct[0]!, 3)).toBe(withoutId(throughEntry[0]!, 1));
      expect(withoutId(direct[1]!, 4)).toBe(withoutId(throughEntry[1]!, 2));
      expect(JSON.parse(direct[0]!)).toEqual({
        jsonrpc: '2.0',
        id: 3,
        result: {
          content: [{ type: 'text', text: 'same bytes' }],
          resultType: 'complete',
          _meta: { 'io.modelcontextprotocol/serverInfo': { name: 'loadout', version: expect.any(String) } },
        },
      });

      // A long call taken off the wire, then cancelled once the server has it: the server hears of the
      // cancel (era_cancelled counts the count calls that stopped on one), the call is never answered,
      // and the session goes on.
      let probe = 100;
      const cancelledCount = async (): Promise<string | undefined> => {
        const id = probe++;
        gateway.write(call(id, 'era_cancelled', {}));
        return (JSON.parse(await gateway.answer(id)) as { result?: { content?: { text?: string }[] } }).result?.content?.[0]?.text;
      };
      expect(await cancelledCount()).toBe('0');
      const callsLogged = async () =>
        (await readFile(path.join(dirs.dataDir, 'era.log'), 'utf8')).split('\n').filter((line) => line.includes('"tools/call"')).length;
      gateway.write(call(5, 'era_count', { n: 3000, delayMs: 20 }));
      await eventually(async () => (await callsLogged()) === 2, 10_000, 'the count call to reach the server');
      gateway.write({ method: 'notifications/cancelled', params: { requestId: 5, reason: 'changed my mind', _meta: ENVELOPE } });
      gateway.write(call(6, 'echo_echo', { text: 'after' }));
      expect(JSON.parse(await gateway.answer(6))).toMatchObject({ result: { content: [{ text: 'after' }] } });
      await eventually(async () => (await cancelledCount()) === '1', 10_000, 'the cancel to reach the server');
      expect(gateway.lineOf(5)).toBeUndefined();
    } finally {
      await gateway.close();
    }
  });
});
