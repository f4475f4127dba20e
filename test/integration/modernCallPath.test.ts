// A 2026-07-28 client's calls of equipped tools over raw stdio: a call that the SDK's stdio entry
// passes on (the first one, before the entry has pinned the connection, or one pipelined behind a
// message the entry still holds) and the same call taken off the wire in front of the entry
// (modernCallPath.ts) are answered with the same bytes; a call taken there can be cancelled. Over
// HTTP the same holds for a plain call answered in front of the SDK's handler (modernHttp.ts) and
// one the handler serves. The answerPaths preload tells from each answer's write which way it went.
import { readFile } from 'node:fs/promises';
import path from 'node:path';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { eventually, fixture, makeTempDirs, nodeServer, writeServersYaml, type TempDirs } from '../helpers/gateway.js';
import { startHttpGateway } from '../helpers/http.js';
import { spawnRawGateway, type RawGateway } from '../helpers/rawStdio.js';

const ENVELOPE = {
  'io.modelcontextprotocol/protocolVersion': '2026-07-28',
  'io.modelcontextprotocol/clientInfo': { name: 'raw', version: '1' },
  'io.modelcontextprotocol/clientCapabilities': {},
};

// Which way the answer to `id` left loadout, as the answerPaths preload saw it: through the SDK's
// stdio entry, or written in front of it.
async function answerPath(gateway: Pick<RawGateway, 'stderr'>, id: number | string): Promise<'entry' | 'wire'> {
  const pattern = new RegExp(`^answer-path ${JSON.stringify(id)} (entry|wire)$`, 'm');
  await eventually(() => pattern.test(gateway.stderr()), 10_000, `the path of answer ${id}`);
  return pattern.exec(gateway.stderr())![1] as 'entry' | 'wire';
}

const call = (id: number, name: string, args: Record<string, unknown>) => ({
  jsonrpc: '2.0',
  id,
  method: 'tools/call',
  params: { name, arguments: args, _meta: ENVELOPE },
});
// The answer line with its id left out, to compare two answers to the same call.
const withoutId = (line: string, id: number) => line.replace(`"id":${id}`, '"id":_');

// Both transports: the echo fixture and the era fixture (a 2025-only server whose count tool runs
// long and which counts the calls cancelled), and the era fixture served 2026-07-28 only (its
// results name it already), every tool equipped.
let dirs: TempDirs;
beforeEach(async () => {
  dirs = await makeTempDirs();
  await writeServersYaml(dirs.configDir, {
    echo: nodeServer(fixture('echo')),
    era: { command: process.execPath, args: [fixture('eraServer'), '--era', 'legacy', '--log', path.join(dirs.dataDir, 'era.log')] },
    modern: { command: process.execPath, args: [fixture('eraServer'), '--era', 'modern'] },
  });
});
afterEach(() => dirs.cleanup());

describe('a 2026-07-28 call of an equipped tool on stdio', () => {
  it('is answered with the same bytes whether the SDK entry passed it on or not, and can be cancelled', async () => {
    const gateway = spawnRawGateway(dirs, { args: ['--equip', 'all'], nodeArgs: ['--import', fixture('answerPaths')] });
    try {
      gateway.send({ jsonrpc: '2.0', id: 'discover', method: 'server/discover', params: { _meta: ENVELOPE } });
      expect(await gateway.answer('discover')).toHaveProperty('result.supportedVersions');

      // Through the entry: the first call pins the connection; the second waits behind a list the entry holds.
      gateway.send(call(1, 'echo_echo', { text: 'same bytes' }));
      const throughEntry = [await gateway.answerLine(1)];
      gateway.send({ jsonrpc: '2.0', id: 'list', method: 'tools/list', params: { _meta: ENVELOPE } }, call(2, 'echo_fail', {}));
      throughEntry.push(await gateway.answerLine(2));
      await gateway.answer('list');

      // Off the wire: the same calls once the entry has nothing of the client's left.
      gateway.send(call(3, 'echo_echo', { text: 'same bytes' }));
      const direct = [await gateway.answerLine(3)];
      gateway.send(call(4, 'echo_fail', {}));
      direct.push(await gateway.answerLine(4));
      expect(await Promise.all([1, 2, 3, 4].map((id) => answerPath(gateway, id)))).toEqual(['entry', 'entry', 'wire', 'wire']);

      expect(withoutId(direct[0]!, 3)).toBe(withoutId(throughEntry[0]!, 1));
      // Both of those end in the session's forwarding; call-tool's result is encoded by the SDK Server itself.
      gateway.send(call(9, 'call-tool', { tool: 'echo.echo', arguments: { text: 'same bytes' } }));
      expect(withoutId(await gateway.answerLine(9), 9)).toBe(withoutId(direct[0]!, 3));
      expect(withoutId(direct[1]!, 4)).toBe(withoutId(throughEntry[1]!, 2));

      // A 2026-07-28 server's result already says it is complete and names that server: both ways keep its name.
      gateway.send(
        { jsonrpc: '2.0', id: 'list2', method: 'tools/list', params: { _meta: ENVELOPE } },
        call(7, 'modern_echo', { text: 'x' }),
      );
      const modernThroughEntry = await gateway.answerLine(7);
      await gateway.answer('list2');
      gateway.send(call(8, 'modern_echo', { text: 'x' }));
      const modernDirect = await gateway.answerLine(8);
      expect(await Promise.all([7, 8].map((id) => answerPath(gateway, id)))).toEqual(['entry', 'wire']);
      expect(withoutId(modernDirect, 8)).toBe(withoutId(modernThroughEntry, 7));
      expect(JSON.parse(modernDirect)).toMatchObject({
        result: {
          resultType: 'complete',
          _meta: { 'io.modelcontextprotocol/serverInfo': { name: 'era-fixture', version: '1.0.0' } },
        },
      });
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
        gateway.send(call(id, 'era_cancelled', {}));
        return ((await gateway.answer(id)).result as { content?: { text?: string }[] } | undefined)?.content?.[0]?.text;
      };
      expect(await cancelledCount()).toBe('0');
      const callsLogged = async () =>
        (await readFile(path.join(dirs.dataDir, 'era.log'), 'utf8')).split('\n').filter((line) => line.includes('"tools/call"')).length;
      gateway.send(call(5, 'era_count', { n: 3000, delayMs: 20 }));
      await eventually(async () => (await callsLogged()) === 2, 10_000, 'the count call to reach the server');
      gateway.send({
        jsonrpc: '2.0',
        method: 'notifications/cancelled',
        params: { requestId: 5, reason: 'changed my mind', _meta: ENVELOPE },
      });
      gateway.send(call(6, 'echo_echo', { text: 'after' }));
      expect(await gateway.answer(6)).toMatchObject({ result: { content: [{ text: 'after' }] } });
      await eventually(async () => (await cancelledCount()) === '1', 10_000, 'the cancel to reach the server');
      expect(gateway.messages().filter((message) => message.id === 5)).toEqual([]);
    } finally {
      await gateway.close();
    }
  });
});

describe('a 2026-07-28 call of an equipped tool over HTTP', () => {
  it('is answered in front of the SDK handler with the bytes the handler writes, and closing the request cancels it', async () => {
    const gateway = await startHttpGateway(dirs, ['--equip', 'all'], {}, ['--import', fixture('answerPaths')]);
    const post = (body: ReturnType<typeof call>, signal?: AbortSignal) =>
      fetch(gateway.url, {
        method: 'POST',
        headers: {
          'content-type': 'application/json',
          accept: 'application/json, text/event-stream',
          'mcp-method': 'tools/call',
          'mcp-name': body.params.name,
          'mcp-protocol-version': '2026-07-28',
        },
        body: JSON.stringify(body),
        signal,
      });
    // A progress token makes a call the handler's (it could send progress); the echo tool sends none.
    const withProgress = (body: ReturnType<typeof call>) => ({
      ...body,
      params: { ...body.params, _meta: { ...ENVELOPE, progressToken: 'p' } },
    });
    const stderr = () => gateway.output();
    try {
      const answers: Record<string, { status: number; type: string | null; text: string }> = {};
      for (const [id, body] of [
        [1, withProgress(call(1, 'echo_echo', { text: 'same bytes' }))],
        [2, call(2, 'echo_echo', { text: 'same bytes' })],
        [3, withProgress(call(3, 'echo_fail', {}))],
        [4, call(4, 'echo_fail', {})],
      ] as const) {
        const response = await post(body);
        answers[id] = { status: response.status, type: response.headers.get('content-type'), text: await response.text() };
      }
      expect(await Promise.all([1, 2, 3, 4].map((id) => answerPath({ stderr }, id)))).toEqual(['entry', 'wire', 'entry', 'wire']);
      expect({ ...answers[2], text: withoutId(answers[2]!.text, 2) }).toEqual({ ...answers[1], text: withoutId(answers[1]!.text, 1) });
      expect({ ...answers[4], text: withoutId(answers[4]!.text, 4) }).toEqual({ ...answers[3], text: withoutId(answers[3]!.text, 3) });
      expect(answers[2]).toMatchObject({ status: 200, type: 'application/json' });
      // call-tool's result is encoded by the SDK Server itself, not by the session's forwarding.
      const viaCallTool = await (await post(call(6, 'call-tool', { tool: 'echo.echo', arguments: { text: 'same bytes' } }))).text();
      expect(withoutId(viaCallTool, 6)).toBe(withoutId(answers[2]!.text, 2));
      expect(JSON.parse(answers[2]!.text)).toMatchObject({ id: 2, result: { content: [{ text: 'same bytes' }], resultType: 'complete' } });

      // A long call answered in front of the handler, its request closed once the server has it:
      // the server hears of the cancel, and the gateway goes on.
      const cancelledCount = async (id: number) =>
        ((await (await post(call(id, 'era_cancelled', {}))).json()) as { result: { content: { text: string }[] } }).result.content[0]!.text;
      expect(await cancelledCount(100)).toBe('0');
      const callsLogged = async () =>
        (await readFile(path.join(dirs.dataDir, 'era.log'), 'utf8')).split('\n').filter((line) => line.includes('"tools/call"')).length;
      const closing = new AbortController();
      const long = post(call(5, 'era_count', { n: 3000, delayMs: 20 }), closing.signal).catch((error: unknown) => error);
      await eventually(async () => (await callsLogged()) === 2, 10_000, 'the count call to reach the server');
      closing.abort();
      expect(await long).toBeInstanceOf(Error);
      await eventually(async () => (await cancelledCount(101)) === '1', 10_000, 'the cancel to reach the server');
      expect(await answerPath({ stderr }, 101)).toBe('wire');
    } finally {
      await gateway.close();
    }
  });
});
