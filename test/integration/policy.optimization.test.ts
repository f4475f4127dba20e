// Policy over the optimization meta-tools, completions and resource subscriptions: a principal
// granted one tool of a server (and one prompt) neither learns of nor touches the rest. Every
// answer it gets is checked, byte for byte, for the names it may not know; a tool, prompt or
// resource it may not use is refused exactly as one that does not exist.
import { Client } from '@modelcontextprotocol/client';
import { StdioClientTransport } from '@modelcontextprotocol/client/stdio';
import { writeFile } from 'node:fs/promises';
import path from 'node:path';
import { stringify } from 'yaml';
import { describe, expect, it } from 'vitest';
import { CLI, eventually, fixture, nodeServer, textOf, useGatewaySandbox } from '../helpers/gateway.js';
import { runCli } from '../helpers/cli.js';
import { recordAnswers } from '../helpers/answers.js';

// What the content fixture has that the principal of the second test is not granted.
const NOT_GRANTED = ['prompt_with_arguments', 'prompt_with_image', 'static-binary', 'watched-resource', 'template-data', 'image_content'];

async function connect(dirs: { configDir: string; dataDir: string }, args: string[] = []): Promise<{ client: Client; answers: string[] }> {
  const transport = new StdioClientTransport({
    command: process.execPath,
    args: [CLI, 'serve', '--config', dirs.configDir, '--data', dirs.dataDir, ...args],
  });
  const answers = recordAnswers(transport);
  const client = new Client({ name: 'policy-test', version: '1' });
  await client.connect(transport);
  return { client, answers };
}

// What an answer says, with the name asked for replaced: a refusal of a hidden thing and of a missing one must match.
async function answerOf(call: () => Promise<unknown>, name: string): Promise<string> {
  const answer = await call().then(
    (result) => JSON.stringify(result),
    (error: Error) => JSON.stringify(error.message),
  );
  return answer.replaceAll(name, 'NAME');
}

describe('policy over the optimization tools, completions and subscriptions', () => {
  const sandbox = useGatewaySandbox();

  it('lets the optimization tools see and change only the granted tools', async () => {
    const servers = {
      vault: nodeServer(fixture('echo'), { env: { ECHO_TOOL_PREFIX: 'vault_' } }),
      hidden: nodeServer(fixture('echo'), { env: { ECHO_TOOL_PREFIX: 'hid_' } }),
    };
    const policy = { local: { subject: 'dev', groups: ['eng'] }, rules: [{ groups: ['eng'], tools: ['vault.vault_add'] }] };
    await writeFile(path.join(sandbox.dirs.configDir, 'servers.yaml'), stringify({ servers }));
    // Someone with every grant (the operator, from the CLI) worked on the tools this principal may not use.
    for (const [server, tool] of [
      ['vault', 'vault_echo'],
      ['hidden', 'hid_echo'],
    ] as const) {
      const proposed = await runCli(sandbox.dirs, ['optimize', 'propose', server, tool, `Secret rewrite of ${tool}.`]);
      expect(proposed.code, proposed.stderr).toBe(0);
    }
    await writeFile(
      path.join(sandbox.dirs.configDir, 'servers.yaml'),
      stringify({ servers, policy, optimization: { expose_tools: true } }),
    );
    const { client, answers } = await connect(sandbox.dirs);
    try {
      const canonical = textOf(await client.callTool({ name: 'get_canonical_tools', arguments: { server: 'vault' } }));
      expect(canonical).toContain('vault_add');
      const proposed = await client.callTool({
        name: 'propose_candidate',
        arguments: { server: 'vault', tool: 'vault_add', description: 'Add two numbers and answer with the sum.' },
      });
      expect(proposed.isError).toBeFalsy();
      const saved = await client.callTool({
        name: 'save_golden_prompts',
        arguments: { server: 'vault', tool: 'vault_add', prompts: [{ category: 'direct', prompt: 'What is 2 plus 3?' }] },
      });
      expect(saved.isError).toBeFalsy();
      expect(textOf(await client.callTool({ name: 'get_eval_results', arguments: { server: 'vault' } }))).toContain('vault_add');
      expect(textOf(await client.callTool({ name: 'get_optimization_report', arguments: {} }))).toContain('vault_add');

      for (const name of ['hidden', 'hid_', 'vault_echo', 'vault_fail', 'Secret rewrite'])
        expect(answers.join('\n'), `"${name}" reached the client`).not.toContain(name);

      const refusedAlike = async (tool: string, args: (name: string) => Record<string, unknown>, hidden: string, missing: string) => {
        const forbidden = await answerOf(() => client.callTool({ name: tool, arguments: args(hidden) }), hidden);
        const nowhere = await answerOf(() => client.callTool({ name: tool, arguments: args(missing) }), missing);
        expect(forbidden, `${tool} of ${hidden}`).toBe(nowhere);
      };
      await refusedAlike('get_canonical_tools', (server) => ({ server }), 'hidden', 'hidxen');
      await refusedAlike('get_optimization_report', (server) => ({ server }), 'hidden', 'hidxen');
      await refusedAlike('get_eval_results', (server) => ({ server }), 'hidden', 'hidxen');
      for (const tool of ['propose_candidate', 'save_golden_prompts', 'revert_optimization', 'promote_candidate']) {
        const args = (name: string): Record<string, unknown> => ({
          server: 'vault',
          tool: name,
          description: 'A new description.',
          prompts: [{ category: 'direct', prompt: 'Echo hello back to me' }],
          candidateId: 'x',
        });
        const only = (name: string): Record<string, unknown> => {
          const all = args(name);
          const keys: Record<string, string[]> = {
            propose_candidate: ['server', 'tool', 'description'],
            save_golden_prompts: ['server', 'tool', 'prompts'],
            revert_optimization: ['server', 'tool'],
            promote_candidate: ['server', 'tool', 'candidateId'],
          };
          return Object.fromEntries(keys[tool]!.map((key) => [key, all[key]]));
        };
        await refusedAlike(tool, only, 'vault_echo', 'vault_nope');
      }
      // Only the names it asked about came back, in refusals.
      for (const name of ['hid_', 'vault_fail', 'Secret rewrite'])
        expect(answers.join('\n'), `"${name}" reached the client`).not.toContain(name);
    } finally {
      await client.close();
    }
    // The operator's candidates are where they were.
    const results = await runCli(sandbox.dirs, ['optimize', 'results', 'vault', '--json']);
    expect(results.stdout).toContain('Secret rewrite of vault_echo');
  });

  it('completes and subscribes only what is granted, and refuses the rest as what does not exist', async () => {
    const servers = { content: nodeServer(fixture('contentServer')) };
    const rules = [{ groups: ['eng'], tools: ['content.simple_text'], prompts: ['content.simple_prompt'] }];
    await writeFile(
      path.join(sandbox.dirs.configDir, 'servers.yaml'),
      stringify({ servers, policy: { local: { subject: 'dev', groups: ['eng'] }, rules } }),
    );
    const { client, answers } = await connect(sandbox.dirs, ['--equip', 'all']);
    try {
      await eventually(
        async () => (await client.listTools()).tools.some((tool) => tool.name.endsWith('simple_text')),
        10_000,
        'content discovered',
      );
      const prompt = (await client.listPrompts()).prompts.find((each) => each.name.endsWith('simple_prompt'))!.name;
      await client.listResourceTemplates();
      const granted = await client.complete({ ref: { type: 'ref/prompt', name: prompt }, argument: { name: 'x', value: 'a' } });
      expect(granted.completion).toBeDefined();
      for (const name of NOT_GRANTED) expect(answers.join('\n'), `"${name}" reached the client`).not.toContain(name);

      const hiddenPrompt = prompt.replace('simple_prompt', 'prompt_with_arguments');
      const missingPrompt = prompt.replace('simple_prompt', 'prompt_with_argumentz');
      const complete = (name: string) => () =>
        client.complete({ ref: { type: 'ref/prompt', name }, argument: { name: 'arg1', value: 'a' } });
      expect(await answerOf(complete(hiddenPrompt), hiddenPrompt)).toBe(await answerOf(complete(missingPrompt), missingPrompt));
      const completeTemplate = (uri: string) => () =>
        client.complete({ ref: { type: 'ref/resource', uri }, argument: { name: 'id', value: '1' } });
      const [hiddenTemplate, missingTemplate] = ['test://template/{id}/data', 'test://templatz/{id}/data'];
      expect(await answerOf(completeTemplate(hiddenTemplate), hiddenTemplate)).toBe(
        await answerOf(completeTemplate(missingTemplate), missingTemplate),
      );
      const subscribe = (uri: string) => () => client.subscribeResource({ uri });
      expect(await answerOf(subscribe('test://watched-resource'), 'watched-resource')).toBe(
        await answerOf(subscribe('test://watched-resourcz'), 'watched-resourcz'),
      );
      // Only the names it asked about came back, in refusals.
      for (const name of NOT_GRANTED.filter((each) => each !== 'prompt_with_arguments' && each !== 'watched-resource'))
        expect(answers.join('\n'), `"${name}" reached the client`).not.toContain(name);
    } finally {
      await client.close();
    }
  });
});
