import path from 'node:path';
import { readFile } from 'node:fs/promises';
import { afterAll, beforeAll, beforeEach, describe, expect, it, vi } from 'vitest';
import { OptimizationSettingsSchema } from '../../config/index.js';
import { COMMAND_TEMPLATE_VARIABLES, CommandBackend, OpenAiBackend, createBackend, type EvalTool } from '../index.js';
import { isLoadoutError } from '../../shared/index.js';
import { startFakeOpenAi, type FakeOpenAi } from '../../../test/fixtures/fakeOpenAi.js';
import { ROOT, fixture, isAlive, eventually } from '../../../test/helpers/gateway.js';
import { useTempDir } from '../../../test/helpers/tempDir.js';

const tools: EvalTool[] = [
  {
    name: 'echo_echo',
    description: 'Echo a message back verbatim.',
    inputSchema: { type: 'object', properties: { text: { type: 'string' } } },
  },
  { name: 'echo_add', description: 'Add two numbers.', inputSchema: { type: 'object' } },
];

async function failure(promise: Promise<unknown>): Promise<{ code: string; message: string }> {
  const error = await promise.then(
    () => undefined,
    (e: unknown) => e,
  );
  if (!isLoadoutError(error)) throw new Error(`expected a LoadoutError, got ${String(error)}`);
  return { code: error.code, message: error.message };
}

describe('OpenAiBackend against a local fake endpoint', () => {
  let fake: FakeOpenAi;
  beforeAll(async () => {
    fake = await startFakeOpenAi();
  });
  afterAll(() => fake.close());
  beforeEach(() => {
    fake.mode = 'ok';
  });
  const backend = (timeoutMs = 5000, apiKey?: string) =>
    new OpenAiBackend({ baseUrl: fake.baseUrl, model: 'fake-model', apiKey, timeoutMs });

  it('sends the tools and reports the tool the model called', async () => {
    const choice = await backend(5000, 'sk-test').chooseTools('Please echo this message verbatim', tools);
    expect(choice.calledTools).toEqual(['echo_echo']);
    const request = fake.requests.at(-1)!;
    expect(request.model).toBe('fake-model');
    expect(request.tools?.map((t) => t.function.name)).toEqual(['echo_echo', 'echo_add']);
    expect(fake.authorizations.at(-1)).toBe('Bearer sk-test');
  });

  it('reports no call when the model answers directly', async () => {
    expect((await backend().chooseTools('What is the capital city of France?', tools)).calledTools).toEqual([]);
  });

  it('turns a slow answer into a per-reply timeout error', async () => {
    fake.mode = 'slow';
    fake.slowMs = 2000;
    const error = await failure(backend(200).chooseTools('Please echo this', tools));
    expect(error.code).toBe('BACKEND_REPLY_INVALID');
    expect(error.message).toMatch(/did not answer within 0.2 s/);
  });

  it('reports malformed JSON and a reply without choices as invalid replies', async () => {
    fake.mode = 'malformed';
    expect(await failure(backend().chooseTools('Please echo this', tools))).toMatchObject({
      code: 'BACKEND_REPLY_INVALID',
      message: expect.stringMatching(/malformed JSON/),
    });
    fake.mode = 'no-choices';
    expect(await failure(backend().complete('s', 'u'))).toMatchObject({
      code: 'BACKEND_REPLY_INVALID',
      message: expect.stringMatching(/without choices/),
    });
  });

  it('treats HTTP 500 as a bad reply but HTTP 401 as an unusable backend', async () => {
    fake.mode = 'http-500';
    expect((await failure(backend().chooseTools('Please echo this', tools))).code).toBe('BACKEND_REPLY_INVALID');
    fake.mode = 'http-401';
    expect(await failure(backend().chooseTools('Please echo this', tools))).toMatchObject({
      code: 'BACKEND_UNAVAILABLE',
      message: expect.stringMatching(/HTTP 401.*api_key_env/),
    });
  });

  it('says the endpoint is unreachable when nothing listens', async () => {
    const down = await startFakeOpenAi();
    await down.close();
    const error = await failure(
      new OpenAiBackend({ baseUrl: down.baseUrl, model: 'm', timeoutMs: 2000 }).chooseTools('Please echo this', tools),
    );
    expect(error.code).toBe('BACKEND_UNAVAILABLE');
    expect(error.message).toMatch(/unreachable \(.*ECONNREFUSED.*\); start it or fix optimization.base_url/);
  });
});

describe('CommandBackend with a fake agent', () => {
  const tempDir = useTempDir('loadout-cmd-');
  const template = [process.execPath, fixture('fakeAgent'), '--tools', '{tools_file}', '--prompt', '{prompt}', '--system', '{system}'];
  const withMode = (mode: string, timeoutMs = 5000) => {
    process.env.FAKE_AGENT_MODE = mode;
    return new CommandBackend({ template, timeoutMs });
  };

  it('reads tool_use events from stream-JSON (prefixed names included)', async () => {
    expect((await withMode('ok').chooseTools('Please echo this message', tools)).calledTools).toEqual(['mcp__loadout__echo_echo']);
    expect((await withMode('ok').chooseTools('What is the capital city of France?', tools)).calledTools).toEqual([]);
  });

  it('returns generated text for generation requests', async () => {
    const text = await withMode('ok').complete('You rewrite MCP tool descriptions', 'Tool: echo\nWrite 2 different rewrites.');
    expect(text).toContain('Echo a message back verbatim');
  });

  it('reports output without stream-JSON and a non-zero exit as invalid replies', async () => {
    expect(await failure(withMode('garbage').chooseTools('Please echo', tools))).toMatchObject({
      code: 'BACKEND_REPLY_INVALID',
      message: expect.stringMatching(/no stream-JSON/),
    });
    expect(await failure(withMode('exit1').chooseTools('Please echo', tools))).toMatchObject({
      code: 'BACKEND_REPLY_INVALID',
      message: expect.stringMatching(/exited with code 1/),
    });
  });

  it('kills a command that runs past the timeout', async () => {
    const pidFile = path.join(tempDir(), 'pids');
    process.env.FAKE_AGENT_PID_FILE = pidFile;
    try {
      const error = await failure(withMode('hang', 500).chooseTools('Please echo', tools));
      expect(error).toMatchObject({
        code: 'BACKEND_REPLY_INVALID',
        message: expect.stringMatching(/did not finish within 0.5 s and was killed/),
      });
      const pid = Number((await readFile(pidFile, 'utf8')).trim());
      await eventually(async () => !(await isAlive(pid)), 5000, 'the hung agent to die');
    } finally {
      delete process.env.FAKE_AGENT_PID_FILE;
    }
  });

  it('sends no SIGKILL after a cancelled command ended on SIGTERM', async () => {
    const pidFile = path.join(tempDir(), 'pids-cancelled');
    process.env.FAKE_AGENT_PID_FILE = pidFile;
    const controller = new AbortController();
    try {
      const running = failure(withMode('hang').chooseTools('Please echo', tools, { signal: controller.signal }));
      await eventually(
        () =>
          readFile(pidFile, 'utf8').then(
            (text) => text.trim() !== '',
            () => false,
          ),
        5000,
        'the agent to start',
      );
      // Only the kill timer set from here on is fake; the child's exit is real I/O.
      vi.useFakeTimers({ toFake: ['setTimeout', 'clearTimeout'] });
      controller.abort();
      expect(await running).toMatchObject({ code: 'BACKEND_UNAVAILABLE', message: expect.stringMatching(/cancelled/) });
      expect(vi.getTimerCount()).toBe(0);
    } finally {
      vi.useRealTimers();
      delete process.env.FAKE_AGENT_PID_FILE;
    }
  });

  it('says when the command cannot be started', async () => {
    const backend = new CommandBackend({ template: [path.join(tempDir(), 'no-such-agent')], timeoutMs: 1000 });
    expect(await failure(backend.chooseTools('Please echo', tools))).toMatchObject({
      code: 'BACKEND_UNAVAILABLE',
      message: expect.stringMatching(/could not be started.*optimization.command/),
    });
  });
});

describe('createBackend', () => {
  it('explains how to configure a backend when none is', () => {
    expect(() => createBackend({ settings: OptimizationSettingsSchema.parse({}) })).toThrow(
      /No model backend is configured.*optimization:\n  backend: openai/s,
    );
  });

  it('names a missing API key variable without showing any key', () => {
    const settings = OptimizationSettingsSchema.parse({
      backend: 'openai',
      base_url: 'http://127.0.0.1:1/v1',
      model: 'm',
      api_key_env: 'LOADOUT_TEST_MISSING_KEY',
    });
    expect(() => createBackend({ settings, env: {} })).toThrow(/LOADOUT_TEST_MISSING_KEY, but it is not set/);
  });

  it('needs a sampling-capable client for the sampling backend', () => {
    expect(() => createBackend({ settings: OptimizationSettingsSchema.parse({ backend: 'sampling' }) })).toThrow(
      /declared the sampling capability/,
    );
  });
});

describe('CommandBackend reading what its command printed', () => {
  it('skips a line nested 1,000,000 levels deep and reads the events around it', async () => {
    const script = [
      "const deep = '['.repeat(1e6) + ']'.repeat(1e6);",
      'console.log(\'{"type":"assistant","content":\' + deep + \'}\');',
      'console.log(JSON.stringify({ type: "tool_use", name: "echo_echo" }));',
    ].join('\n');
    const backend = new CommandBackend({ template: [process.execPath, '-e', script], timeoutMs: 20_000 });
    expect((await backend.chooseTools('Please echo', tools)).calledTools).toEqual(['echo_echo']);
  });
});

describe('the command template variables', () => {
  it('replaces each variable docs/optimization.md documents, and documents each one it replaces', async () => {
    const doc = await readFile(path.join(ROOT, 'docs/optimization.md'), 'utf8');
    for (const name of COMMAND_TEMPLATE_VARIABLES)
      expect(doc, `{${name}}`).toMatch(new RegExp(`^  \\| \`\\{${name}\\}\` \\| .+ \\|$`, 'm'));
    // `node -e` prints its argv: every variable filled in, anything else in braces kept.
    const backend = new CommandBackend({
      template: [
        process.execPath,
        '-e',
        'console.log(JSON.stringify(process.argv.slice(1)))',
        ...COMMAND_TEMPLATE_VARIABLES.map((name) => `{${name}}`),
        '{other}',
      ],
      timeoutMs: 10_000,
      toolName: 'read_graph',
    });
    const [prompt, system, toolsFile, tool, other] = JSON.parse(await backend.complete('the system', 'the prompt')) as string[];
    expect({ prompt, system, tool, other }).toEqual({ prompt: 'the prompt', system: 'the system', tool: 'read_graph', other: '{other}' });
    expect(toolsFile).toMatch(/tools\.json$/);
  });
});
