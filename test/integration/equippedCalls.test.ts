import type { Progress } from '@modelcontextprotocol/server';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { z } from 'zod';
import {
  eventually,
  fixture,
  makeTempDirs,
  nodeServer,
  startGateway,
  textOf,
  writeServersYaml,
  type GatewayProcess,
  type TempDirs,
} from '../helpers/gateway.js';
import { ProtocolErrorCode } from '@modelcontextprotocol/server';

// Calls to equipped tools are answered by the session's intake (clientIntake.ts), past the SDK
// Server; these check that path keeps the Server's contract for everything a client can send.
describe('forwarded calls over stdio', () => {
  let dirs: TempDirs;
  let gateway: GatewayProcess;
  beforeAll(async () => {
    dirs = await makeTempDirs();
    await writeServersYaml(dirs.configDir, { live: nodeServer(fixture('interactive')), crash: nodeServer(fixture('crash')) });
    gateway = await startGateway({ dirs, args: ['--equip', 'all'] });
    await eventually(
      async () => {
        const names = (await gateway.client.listTools()).tools.map((tool) => tool.name);
        return names.includes('live_echo') && names.includes('crash_crash');
      },
      15_000,
      'discovered tools',
    );
  });
  afterAll(async () => {
    await gateway.close();
    await dirs.cleanup();
  });

  const echoStillAnswers = async (): Promise<void> => {
    expect(textOf(await gateway.client.callTool({ name: 'live_echo', arguments: { text: 'still here' } }))).toBe('still here');
  };

  it('answers malformed tools/call params with InvalidParams saying what is wrong, and stays up', async () => {
    const malformed: Array<[unknown, string]> = [
      [{ name: 'live_echo', arguments: ['text'] }, 'params.arguments must be an object'],
      [{ name: 'live_echo', arguments: 'text' }, 'params.arguments must be an object'],
      [{ name: 'live_echo', _meta: { progressToken: {} } }, 'params._meta.progressToken must be a string or a number'],
      [{ name: 'live_echo', _meta: 'x' }, 'params._meta must be an object'],
      [{ name: 7 }, 'params.name must be a string'],
      [{ name: 'not_equipped', arguments: [] }, 'params.arguments must be an object'],
      [[], 'params must be an object'],
    ];
    for (const [params, where] of malformed) {
      const call = gateway.client.request({ method: 'tools/call', params: params as never }, z.unknown());
      await expect(call).rejects.toMatchObject({
        code: ProtocolErrorCode.InvalidParams,
        message: expect.stringContaining(`Invalid tools/call request: ${where}`),
      });
    }
    await echoStillAnswers();
  });

  it('serves concurrent calls, each answered under its own id', async () => {
    const texts = Array.from({ length: 40 }, (_, index) => `call ${index}`);
    const results = await Promise.all(texts.map((text) => gateway.client.callTool({ name: 'live_echo', arguments: { text } })));
    expect(results.map(textOf)).toEqual(texts);
  });

  it("passes progress on under the client's own token", async () => {
    const seen: Progress[] = [];
    const result = await gateway.client.callTool(
      { name: 'live_progress', arguments: { steps: 3, delayMs: 50 } },
      {
        onprogress: (progress) => seen.push(progress),
      },
    );
    expect(textOf(result)).toBe('did 3 steps');
    // The SDK client may drop the last progress sent right before the result (see http.passthrough).
    expect(seen.slice(0, 2)).toMatchObject([
      { progress: 1, total: 3 },
      { progress: 2, total: 3 },
    ]);
  });

  it('cancels the downstream call when the client cancels, and sends no answer afterwards', async () => {
    const errors: string[] = [];
    gateway.client.onerror = (error) => errors.push(error.message);
    const abort = new AbortController();
    const call = gateway.client.callTool(
      { name: 'live_wait', arguments: { ms: 60_000, answerLate: true } },
      {
        signal: abort.signal,
        onprogress: () => abort.abort('user pressed escape'),
      },
    );
    await expect(call).rejects.toThrow();
    await eventually(
      async () => textOf(await gateway.client.callTool({ name: 'live_cancellations', arguments: {} })) === '1',
      10_000,
      'downstream cancellation',
    );
    // The downstream answers 100 ms after the cancel anyway; loadout must not pass that on. The
    // count is read on the same pipe after that answer, so loadout has handled it by then.
    await eventually(
      async () => textOf(await gateway.client.callTool({ name: 'live_late_answers', arguments: {} })) === '1',
      10_000,
      'the late answer',
    );
    expect(errors).toEqual([]);
    await echoStillAnswers();
  });

  it('answers a server that dies mid-call with isError naming it, and restarts it on the next call', async () => {
    const died = await gateway.client.callTool({ name: 'crash_crash', arguments: {} });
    expect(died.isError).toBe(true);
    expect(textOf(died)).toContain("Server 'crash' closed the connection during crash.crash");
    // Why, in the server's own words: its exit and the last lines it wrote to stderr.
    expect(textOf(died)).toContain('its process exited with code 1');
    expect(textOf(died)).toMatch(/The last lines of its stderr:\n {2}crash fixture: FATAL out of memory \(simulated\)/);
    expect(textOf(await gateway.client.callTool({ name: 'crash_echo', arguments: { text: 'back' } }))).toBe('back');
    await echoStillAnswers();
  });
});
