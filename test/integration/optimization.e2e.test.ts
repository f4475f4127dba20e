import type { Tool } from '@modelcontextprotocol/server';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { startFakeOpenAi } from '../fixtures/fakeOpenAi.js';
import {
  META_TOOL_NAMES,
  fixture,
  makeTempDirs,
  nodeServer,
  startGateway,
  textOf,
  writeServersYaml,
  type GatewayProcess,
  type TempDirs,
} from '../helpers/gateway.js';
import { OPTIMIZATION_META_TOOLS } from '../../src/gateway/metaTools/index.js';
import {
  ECHO_CANONICAL,
  GOLDEN_PROMPTS,
  GOOD_CANDIDATE,
  WEAK_CANDIDATE,
  useFakeOpenAi,
  writeEchoWithBackend,
} from '../helpers/optimization.js';

const ECHO_SCHEMA = {
  type: 'object',
  properties: { text: { type: 'string', description: 'Text to echo' } },
  required: ['text'],
  additionalProperties: false,
};

async function call(
  gateway: GatewayProcess,
  name: string,
  args: Record<string, unknown>,
): Promise<{ isError: boolean; json: Record<string, unknown>; text: string }> {
  const result = await gateway.client.callTool({ name, arguments: args });
  const text = textOf(result);
  return { isError: result.isError === true, text, json: parseObject(text) };
}

// Optimization tools answer JSON; the toolset tools answer prose.
function parseObject(text: string): Record<string, unknown> {
  try {
    return JSON.parse(text) as Record<string, unknown>;
  } catch {
    return {};
  }
}

async function listedEcho(gateway: GatewayProcess): Promise<Tool | undefined> {
  return (await gateway.client.listTools()).tools.find((tool) => tool.name === 'echo_echo');
}

// Makes each change and waits for its list_changed in turn. Each change is the next one the gateway
// sees after the one before, so a second notice of an earlier change would arrive before a later one's.
async function announcedInTurn(
  gateway: GatewayProcess,
  announced: number,
  steps: ReadonlyArray<[string, Record<string, unknown>]>,
): Promise<void> {
  for (const [name, args] of steps) {
    await call(gateway, name, args);
    await gateway.waitForListChanged(++announced);
  }
}

describe('tool-description optimization through a real gateway', () => {
  const fake = useFakeOpenAi();
  let dirs: TempDirs;
  let gateway: GatewayProcess | undefined;
  beforeEach(async () => {
    dirs = await makeTempDirs();
    await writeEchoWithBackend(dirs.configDir, fake().baseUrl);
  });
  afterEach(async () => {
    await gateway?.close();
    gateway = undefined;
    await dirs.cleanup();
  });

  it('runs the whole loop: canonical, propose, prompts, evaluation, promotion with one list_changed, call, restart, revert', async () => {
    gateway = await startGateway({ dirs });
    expect((await call(gateway, 'build-toolset', { name: 'e', tools: ['echo.echo'], equip: true })).isError).toBe(false);
    expect(gateway.listChangedCount()).toBe(1);

    const canonical = await call(gateway, 'get_canonical_tools', { server: 'echo' });
    expect(canonical.json.tools).toContainEqual({
      name: 'echo',
      description: 'Return the given text unchanged.',
      inputSchema: ECHO_SCHEMA,
    });

    const proposed = await call(gateway, 'propose_candidate', { server: 'echo', tool: 'echo', description: GOOD_CANDIDATE });
    expect(proposed.json).toEqual({ candidateId: expect.any(String), charCount: GOOD_CANDIDATE.length });
    const candidateId = proposed.json.candidateId as string;
    expect((await call(gateway, 'save_golden_prompts', { server: 'echo', tool: 'echo', prompts: GOLDEN_PROMPTS })).json.saved).toBe(15);

    const progress: Array<{ progress: number; total?: number }> = [];
    const evaluated = await gateway.client.callTool(
      { name: 'run_evaluation', arguments: { server: 'echo', tool: 'echo' } },
      {
        onprogress: (p) => progress.push(p),
      },
    );
    const summary = JSON.parse(textOf(evaluated)) as {
      runs: number;
      baseline: { overall: number };
      candidates: Array<{ metrics: { overall: number }; promotable: boolean }>;
    };
    expect(summary.runs).toBe(30);
    expect(summary.baseline.overall).toBeCloseTo(1 / 3);
    expect(summary.candidates[0]).toMatchObject({ metrics: { overall: 1 }, promotable: true });
    // The SDK client handles a notification a tick after the response that follows it, so the very
    // last progress step may arrive after callTool has resolved and be dropped; all others arrive in order.
    expect(progress.length).toBeGreaterThanOrEqual(29);
    expect(progress.map((p) => p.progress)).toEqual([...progress.map((p) => p.progress)].sort((a, b) => a - b));
    expect(progress.at(-1)).toMatchObject({ progress: expect.toSatisfy((n: number) => n >= 29), total: 30 });

    const promoted = await call(gateway, 'promote_candidate', { server: 'echo', tool: 'echo', candidateId });
    expect(promoted.json).toMatchObject({ promoted: true, description: GOOD_CANDIDATE });
    await gateway.waitForListChanged(2);
    const revert: [string, Record<string, unknown>] = ['revert_optimization', { server: 'echo', tool: 'echo' }];
    const promote: [string, Record<string, unknown>] = ['promote_candidate', { server: 'echo', tool: 'echo', candidateId, force: true }];
    await announcedInTurn(gateway, 2, [revert, promote]);
    expect(gateway.listChangedCount()).toBe(4);
    const listed = await listedEcho(gateway);
    expect(listed?.description).toBe(GOOD_CANDIDATE);
    expect(listed?.inputSchema).toEqual(ECHO_SCHEMA);
    const detail = JSON.parse((await call(gateway, 'discover-all-tools', { query: 'echo', detail: true })).text) as {
      tools: Array<{ tool: string; description: string }>;
    };
    expect(detail.tools.find((t) => t.tool === 'echo.echo')?.description).toBe(GOOD_CANDIDATE);
    expect(textOf(await gateway.client.callTool({ name: 'echo_echo', arguments: { text: 'still works' } }))).toBe('still works');

    await gateway.close();
    gateway = await startGateway({ dirs });
    expect((await listedEcho(gateway))?.description).toBe(GOOD_CANDIDATE);
    const report = await call(gateway, 'get_optimization_report', { server: 'echo' });
    expect((report.json.reports as Array<{ optimizedCount: number }>)[0]?.optimizedCount).toBe(1);

    expect((await call(gateway, 'revert_optimization', { server: 'echo', tool: 'echo' })).json).toMatchObject({
      reverted: true,
      description: ECHO_CANONICAL,
    });
    await gateway.waitForListChanged(1);
    expect((await listedEcho(gateway))?.description).toBe(ECHO_CANONICAL);
    await announcedInTurn(gateway, 1, [promote, revert]);
    expect(gateway.listChangedCount()).toBe(3);
  });

  it('refuses a candidate below the thresholds naming the threshold, and promotes it with force', async () => {
    gateway = await startGateway({ dirs });
    const weak = (await call(gateway, 'propose_candidate', { server: 'echo', tool: 'echo', description: WEAK_CANDIDATE })).json
      .candidateId as string;
    await call(gateway, 'save_golden_prompts', { server: 'echo', tool: 'echo', prompts: GOLDEN_PROMPTS });
    await call(gateway, 'run_evaluation', { server: 'echo', tool: 'echo' });
    const refused = await call(gateway, 'promote_candidate', { server: 'echo', tool: 'echo', candidateId: weak });
    expect(refused.isError).toBe(true);
    expect(refused.text).toMatch(/^Candidate '.+' was not promoted: min_overall: overall 67% is below 85%\. Pass force: true/);
    const forced = await call(gateway, 'promote_candidate', { server: 'echo', tool: 'echo', candidateId: weak, force: true });
    expect(forced.json).toMatchObject({ promoted: true, forced: true });
  });

  it('answers a 281-character candidate and an injection pattern with a plain isError sentence', async () => {
    gateway = await startGateway({ dirs });
    const long = await call(gateway, 'propose_candidate', { server: 'echo', tool: 'echo', description: 'a'.repeat(281) });
    expect(long).toMatchObject({ isError: true, text: 'The description is 281 characters; the limit is 280. Shorten it by 1.' });
    const injected = await call(gateway, 'propose_candidate', {
      server: 'echo',
      tool: 'echo',
      description: 'Echo text. See https://example.com/more.',
    });
    expect(injected.isError).toBe(true);
    expect(injected.text).toMatch(/instruction injection: it contains a URL/);
  });

  it('reports a backend that is down and a malformed model reply as isError, and stays up', async () => {
    gateway = await startGateway({ dirs });
    await call(gateway, 'propose_candidate', { server: 'echo', tool: 'echo', description: GOOD_CANDIDATE });
    await call(gateway, 'save_golden_prompts', { server: 'echo', tool: 'echo', prompts: GOLDEN_PROMPTS });
    fake().mode = 'malformed';
    const malformed = await call(gateway, 'run_evaluation', { server: 'echo', tool: 'echo' });
    expect(malformed.isError).toBe(true);
    expect(malformed.text).toMatch(/3 prompts in a row failed.*malformed JSON/);
    const generated = await call(gateway, 'generate_candidates', { server: 'echo', tool: 'echo' });
    expect(generated).toMatchObject({ isError: true, text: expect.stringMatching(/malformed JSON/) });
    await gateway.close();

    const down = await startFakeOpenAi();
    await down.close();
    await writeEchoWithBackend(dirs.configDir, down.baseUrl);
    gateway = await startGateway({ dirs });
    const unreachable = await call(gateway, 'run_evaluation', { server: 'echo', tool: 'echo' });
    expect(unreachable.isError).toBe(true);
    expect(unreachable.text).toMatch(/unreachable .*ECONNREFUSED.*fix optimization.base_url/);
    expect((await call(gateway, 'get_eval_results', { server: 'echo', tool: 'echo' })).isError).toBe(false);
  });

  it('keeps the optimization tools out of the tool list unless optimization.expose_tools is on, and says how to turn them on', async () => {
    await writeServersYaml(dirs.configDir, { echo: nodeServer(fixture('echo')) });
    gateway = await startGateway({ dirs });
    const names = (await gateway.client.listTools()).tools.map((tool) => tool.name);
    expect(names).toEqual(META_TOOL_NAMES);
    const result = await call(gateway, 'get_canonical_tools', { server: 'echo' });
    expect(result.isError).toBe(true);
    expect(result.text).toMatch(/^get_canonical_tools is an optimization tool, and those are off: set optimization\.expose_tools: true/);
    await gateway.close();
    await writeServersYaml(dirs.configDir, { echo: nodeServer(fixture('echo')) }, { optimization: { expose_tools: true } });
    gateway = await startGateway({ dirs });
    const listed = (await gateway.client.listTools()).tools;
    expect(listed.map((tool) => tool.name)).toEqual([...META_TOOL_NAMES, ...OPTIMIZATION_META_TOOLS.map((tool) => tool.name)]);
    // 5.8 KB of tools, 0.7 KB of Claude Code's always-load mark (37 bytes on each of the 19), and
    // 1.3 KB of annotations (clients run a tool unasked only if they say it is safe to: docs/clients.md).
    expect(Buffer.byteLength(JSON.stringify({ tools: listed }))).toBeLessThan(8.5 * 1024);
  });

  it('says how to configure a backend when none is configured', async () => {
    await writeServersYaml(dirs.configDir, { echo: nodeServer(fixture('echo')) }, { optimization: { expose_tools: true } });
    gateway = await startGateway({ dirs });
    const result = await call(gateway, 'generate_golden_prompts', { server: 'echo', tool: 'echo' });
    expect(result.isError).toBe(true);
    expect(result.text).toMatch(/^No model backend is configured\. Add this to servers\.yaml[^\n]*:\noptimization:\n  backend: openai\n/);
  });

  it('answers malformed arguments of every optimization tool with one readable line', async () => {
    gateway = await startGateway({ dirs });
    const cases: Array<[string, Record<string, unknown>]> = [
      ['get_canonical_tools', {}],
      ['propose_candidate', { server: 'echo', tool: 'echo' }],
      ['save_golden_prompts', { server: 'echo', tool: 'echo', prompts: [{ category: 'sideways', prompt: 'short' }] }],
      ['save_golden_prompts', { server: 'echo', tool: 'echo', prompts: [] }],
      ['record_eval_run', { server: 'echo', candidateId: 'x', promptId: 'y', result: { toolCalled: 'yes' } }],
      ['get_eval_results', { server: 5 }],
      ['promote_candidate', { server: 'echo', tool: 'echo' }],
      ['revert_optimization', { server: 'echo', tool: 5 }],
      ['get_optimization_report', { server: ['echo'] }],
      ['generate_candidates', { server: 'echo', tool: 'echo', count: 0 }],
      ['generate_golden_prompts', { server: 'echo', tool: 'echo', directCount: 2.5 }],
      ['run_evaluation', { server: 'echo', tool: 'echo', candidateIds: 'all' }],
    ];
    for (const [name, args] of cases) {
      const result = await call(gateway, name, args);
      expect(result.isError, name).toBe(true);
      expect(result.text, name).toMatch(new RegExp(`^Invalid arguments for ${name}: .+ Example: \\{.*\\}$`));
      expect(result.text.includes('\n'), name).toBe(false);
    }
    const unknownPrompt = await call(gateway, 'record_eval_run', {
      server: 'echo',
      candidateId: 'canonical',
      promptId: 'nope',
      result: { toolCalled: true },
    });
    expect(unknownPrompt).toMatchObject({ isError: true, text: expect.stringMatching(/^No golden prompt 'nope' for server 'echo'/) });
    const revertNothing = await call(gateway, 'revert_optimization', { server: 'echo', tool: 'echo' });
    expect(revertNothing).toMatchObject({ isError: true, text: 'echo.echo has no promoted description to revert.' });
  });

  it('takes GoldenPrompt and EvalRun shapes: ids kept, toolName checked, correct computed or a contradiction refused', async () => {
    gateway = await startGateway({ dirs });
    const seedPrompts = [
      {
        id: 'echo-direct-1',
        toolName: 'echo',
        category: 'direct',
        prompt: 'Echo back the words hello world',
        expectedBehavior: { shouldCallTool: true, notes: 'plain ask' },
      },
      {
        id: 'echo-negative-1',
        toolName: 'echo',
        category: 'negative',
        prompt: 'What is the capital of France?',
        expectedBehavior: { shouldCallTool: false },
      },
    ];
    const saved = await call(gateway, 'save_golden_prompts', { server: 'echo', tool: 'echo', prompts: seedPrompts });
    expect(saved.isError, saved.text).toBe(false);
    expect(saved.json.prompts).toEqual([
      { promptId: 'echo-direct-1', category: 'direct', shouldCallTool: true },
      { promptId: 'echo-negative-1', category: 'negative', shouldCallTool: false },
    ]);
    const wrongTool = await call(gateway, 'save_golden_prompts', {
      server: 'echo',
      tool: 'echo',
      prompts: [{ ...seedPrompts[0], toolName: 'add' }],
    });
    expect(wrongTool).toMatchObject({
      isError: true,
      text: expect.stringContaining("Prompt 1 is for tool 'add', but these prompts are saved for 'echo'"),
    });
    const twice = await call(gateway, 'save_golden_prompts', { server: 'echo', tool: 'echo', prompts: [seedPrompts[0], seedPrompts[0]] });
    expect(twice).toMatchObject({ isError: true, text: expect.stringContaining("Prompt 2 has id 'echo-direct-1', already used") });

    const seedResult = { toolCalled: true, correct: true, reasoning: 'asked to echo', durationMs: 812 };
    const recorded = await call(gateway, 'record_eval_run', {
      server: 'echo',
      candidateId: 'canonical',
      promptId: 'echo-direct-1',
      result: seedResult,
    });
    expect(recorded.json).toEqual({ runId: expect.any(String), correct: true });
    const computed = await call(gateway, 'record_eval_run', {
      server: 'echo',
      candidateId: 'canonical',
      promptId: 'echo-negative-1',
      result: { toolCalled: true, durationMs: 5 },
    });
    expect(computed.json).toEqual({ runId: expect.any(String), correct: false, correctComputed: true });
    const failed = await call(gateway, 'record_eval_run', {
      server: 'echo',
      candidateId: 'canonical',
      promptId: 'echo-negative-1',
      result: { toolCalled: false, error: 'model timed out', durationMs: 30000 },
    });
    expect(failed.json.correct).toBe(false);
    const contradiction = await call(gateway, 'record_eval_run', {
      server: 'echo',
      candidateId: 'canonical',
      promptId: 'echo-negative-1',
      result: { toolCalled: true, correct: true },
    });
    expect(contradiction).toMatchObject({
      isError: true,
      text: expect.stringMatching(/^correct: true contradicts the run: toolCalled is true and prompt 'echo-negative-1' expects no call/),
    });
  });

  it('keeps the whole idle tools/list under 8.5 KB', async () => {
    gateway = await startGateway({ dirs });
    const { tools } = await gateway.client.listTools();
    const names = tools.map((t) => t.name);
    for (const name of [
      'get_canonical_tools',
      'propose_candidate',
      'save_golden_prompts',
      'record_eval_run',
      'get_eval_results',
      'promote_candidate',
      'revert_optimization',
      'get_optimization_report',
      'generate_candidates',
      'generate_golden_prompts',
      'run_evaluation',
    ]) {
      expect(names).toContain(name);
    }
    expect(Buffer.byteLength(JSON.stringify({ tools }))).toBeLessThan(8.5 * 1024);
  });
});
