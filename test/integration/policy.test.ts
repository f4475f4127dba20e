// Policy: a principal in group A sees and calls only what A is granted, over stdio (the principal
// from `policy.local`) and over HTTP in both eras (the principal from an access token). The names
// it may not use appear in no answer it gets; a call of one fails as a call of a tool that does
// not exist; a policy edit applies without a restart, and one that does not parse fails closed.
import { Client, StreamableHTTPClientTransport } from '@modelcontextprotocol/client';
import { StdioClientTransport } from '@modelcontextprotocol/client/stdio';
import { mkdir, writeFile } from 'node:fs/promises';
import path from 'node:path';
import { stringify } from 'yaml';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { CLI, eventually, fixture, makeTempDirs, nodeServer, textOf, type TempDirs } from '../helpers/gateway.js';
import { runCli } from '../helpers/cli.js';
import { recordAnswers } from '../helpers/answers.js';
import { startHttpGateway, type ListeningProcess } from '../helpers/http.js';
import { startOidcProvider, type OidcFixture } from '../fixtures/oidcProvider.js';

// `echo` is granted whole; of `vault` only its add tool; `hidden` not at all.
const SERVERS = {
  echo: nodeServer(fixture('echo')),
  vault: nodeServer(fixture('echo'), { env: { ECHO_TOOL_PREFIX: 'vault_' } }),
  hidden: nodeServer(fixture('echo'), { env: { ECHO_TOOL_PREFIX: 'hid_' } }),
};
const GRANTS = [{ groups: ['engineering'], servers: ['echo'], tools: ['vault.vault_add'] }];
const FORBIDDEN = ['hidden', 'hid_', 'vault_echo', 'vault_fail'];

async function policyYaml(configDir: string, extra: Record<string, unknown>, rules: unknown = GRANTS): Promise<void> {
  const policy = { local: { subject: 'dev', groups: ['engineering'] }, rules };
  // A toolset someone with more grants saved: equipping it must not tell what else it lists.
  await mkdir(path.join(configDir, 'toolsets'), { recursive: true });
  await writeFile(
    path.join(configDir, 'toolsets', 'team.yaml'),
    stringify({ name: 'team', tools: ['echo.echo', 'hidden.hid_echo', 'vault.vault_echo'] }),
  );
  await writeFile(path.join(configDir, 'servers.yaml'), stringify({ servers: SERVERS, policy, ...extra }));
}

// What a principal of group engineering does, and what it must get.
async function exerciseGrants(client: Client, answers: string[]): Promise<void> {
  const map = textOf(await client.callTool({ name: 'discover-all-tools', arguments: {} }));
  expect(map).toContain('echo');
  expect(map).toContain('vault');
  textOf(await client.callTool({ name: 'discover-all-tools', arguments: { query: 'echo text back' } }));
  textOf(await client.callTool({ name: 'discover-all-tools', arguments: { query: 'add two numbers' } }));
  textOf(await client.callTool({ name: 'discover-all-tools', arguments: { server: 'vault' } }));
  expect(textOf(await client.callTool({ name: 'equip-toolset', arguments: { name: 'team' } }))).toContain('echo');
  textOf(await client.callTool({ name: 'get-active-toolset', arguments: {} }));
  await client.callTool({ name: 'equip-toolset', arguments: { name: 'all' } });
  const tools = (await client.listTools()).tools.map((tool) => tool.name);
  expect(tools).toEqual(expect.arrayContaining(['echo_echo', 'echo_add', 'vault_vault_add']));
  expect(textOf(await client.callTool({ name: 'echo_echo', arguments: { text: 'granted' } }))).toBe('granted');
  expect(JSON.stringify(await client.callTool({ name: 'vault_vault_add', arguments: { a: 2, b: 3 } }))).toContain('5');
  await client.listPrompts().catch(() => undefined);
  await client.listResources().catch(() => undefined);
  const built = await client.callTool({ name: 'build-toolset', arguments: { name: 'mine', tools: ['echo.echo', 'vault.vault_add'] } });
  expect(built.isError).toBeFalsy();
  for (const name of FORBIDDEN) expect(answers.join('\n'), `"${name}" reached the client`).not.toContain(name);

  // A forbidden tool is refused exactly as one that does not exist (the agent's own word aside).
  const forbidden = await client.callTool({ name: 'call-tool', arguments: { tool: 'hidden.hid_echo', arguments: { text: 'x' } } });
  const missing = await client.callTool({ name: 'call-tool', arguments: { tool: 'hidxen.hid_echo', arguments: { text: 'x' } } });
  expect(textOf(forbidden).replace('hidden.hid_echo', 'NAME')).toBe(textOf(missing).replace('hidxen.hid_echo', 'NAME'));
  // Nor does a server filter tell a server that exists but is not granted from one that does not.
  const hiddenServer = await client.callTool({ name: 'discover-all-tools', arguments: { server: 'hidden' } });
  const noServer = await client.callTool({ name: 'discover-all-tools', arguments: { server: 'hidxen' } });
  expect(textOf(hiddenServer).replace('hidden', 'NAME')).toBe(textOf(noServer).replace('hidxen', 'NAME'));
  const direct = await client.callTool({ name: 'hidden_hid_echo', arguments: { text: 'x' } }).catch((error: Error) => error.message);
  const nowhere = await client.callTool({ name: 'hidxen_hid_echo', arguments: { text: 'x' } }).catch((error: Error) => error.message);
  expect(JSON.stringify(direct).replaceAll('hidden_hid_echo', 'NAME')).toBe(JSON.stringify(nowhere).replaceAll('hidxen_hid_echo', 'NAME'));
}

describe('policy', () => {
  let dirs: TempDirs;
  beforeEach(async () => {
    dirs = await makeTempDirs();
  });
  afterEach(async () => {
    await dirs.cleanup();
  });

  it('over stdio, the principal of policy.local sees and calls only its grants, and a policy edit applies at once', async () => {
    await policyYaml(dirs.configDir, {});
    const transport = new StdioClientTransport({
      command: process.execPath,
      args: [CLI, 'serve', '--config', dirs.configDir, '--data', dirs.dataDir],
      stderr: 'pipe',
    });
    let stderr = '';
    transport.stderr?.on('data', (chunk: Buffer) => (stderr += chunk.toString('utf8')));
    const answers = recordAnswers(transport);
    const client = new Client({ name: 'policy-test', version: '1' });
    await client.connect(transport);
    try {
      await exerciseGrants(client, answers);
      // `loadout search` searches as policy.local sees the catalog.
      const search = await runCli(dirs, ['search', 'echo the text back', '--json', '--limit', '50']);
      expect(search.code).toBe(0);
      expect(search.stdout).toContain('echo.echo');
      for (const name of FORBIDDEN) expect(search.stdout + search.stderr, `"${name}" in loadout search`).not.toContain(name);
      // A policy that does not parse: the last good one stays, and the log says why.
      await writeFile(
        path.join(dirs.configDir, 'servers.yaml'),
        stringify({ servers: SERVERS, policy: { rules: [{ servers: ['hidden'] }] } }),
      );
      await eventually(() => stderr.includes('a rule names whom it grants to'), 10_000, 'the refused policy logged');
      expect((await client.listTools()).tools.map((tool) => tool.name)).not.toContain('hidden_hid_echo');
      // A good edit applies without a restart.
      await policyYaml(dirs.configDir, {}, [{ groups: ['engineering'], servers: ['echo', 'hidden'] }]);
      await eventually(
        async () => (await client.listTools()).tools.some((tool) => tool.name === 'hidden_hid_echo'),
        10_000,
        'hidden granted',
      );
      expect((await client.listTools()).tools.map((tool) => tool.name)).not.toContain('vault_vault_add');
    } finally {
      await client.close();
    }
  });

  it('lists and serves only granted prompts and no resources of a server granted none', async () => {
    const servers = { content: nodeServer(fixture('contentServer')) };
    const rules = [{ groups: ['engineering'], tools: ['content.simple_text'], prompts: ['content.simple_prompt'] }];
    await writeFile(
      path.join(dirs.configDir, 'servers.yaml'),
      stringify({ servers, policy: { local: { subject: 'dev', groups: ['engineering'] }, rules } }),
    );
    const transport = new StdioClientTransport({
      command: process.execPath,
      args: [CLI, 'serve', '--config', dirs.configDir, '--data', dirs.dataDir, '--equip', 'all'],
    });
    const answers = recordAnswers(transport);
    const client = new Client({ name: 'policy-test', version: '1' });
    await client.connect(transport);
    try {
      await eventually(
        async () => (await client.listTools()).tools.some((tool) => tool.name.endsWith('simple_text')),
        10_000,
        'content discovered',
      );
      expect((await client.listPrompts()).prompts.map((prompt) => prompt.name).join(' ')).toContain('simple_prompt');
      expect((await client.listResources()).resources).toEqual([]);
      expect((await client.listResourceTemplates()).resourceTemplates).toEqual([]);
      textOf(await client.callTool({ name: 'discover-all-tools', arguments: { server: 'content' } }));
      const forbiddenRead = await client.readResource({ uri: 'test://static-text' }).catch((error: Error) => error.message);
      const missingRead = await client.readResource({ uri: 'test://static-texx' }).catch((error: Error) => error.message);
      expect(JSON.stringify(forbiddenRead).replace('static-text', 'NAME')).toBe(JSON.stringify(missingRead).replace('static-texx', 'NAME'));
      for (const name of [
        'prompt_with_arguments',
        'prompt_with_image',
        'static-binary',
        'watched-resource',
        'template-data',
        'image_content',
        'tool_with_logging',
      ]) {
        expect(answers.join('\n'), `"${name}" reached the client`).not.toContain(name);
      }
    } finally {
      await client.close();
    }
  });

  // A servers.yaml that is not valid never stops serve (it runs on the last good parse, here none:
  // no servers at all), so a policy that does not parse grants nothing.
  it('serves no server, naming the problem, with a policy that does not parse and no good parse before', async () => {
    await writeFile(
      path.join(dirs.configDir, 'servers.yaml'),
      stringify({ servers: SERVERS, policy: { rules: [{ tools: ['nodot'], everyone: true }] } }),
    );
    const transport = new StdioClientTransport({
      command: process.execPath,
      args: [CLI, 'serve', '--config', dirs.configDir, '--data', dirs.dataDir, '--equip', 'all'],
      stderr: 'pipe',
    });
    const client = new Client({ name: 'policy-test', version: '1' });
    await client.connect(transport);
    try {
      const map = textOf(await client.callTool({ name: 'discover-all-tools', arguments: {} }));
      expect(map).toContain('name it as server.name');
      const exposed = (await client.listTools()).tools.map((tool) => tool.name);
      const servers = Object.keys(SERVERS);
      expect(exposed.filter((name) => servers.some((server) => name.startsWith(server)))).toEqual([]);
    } finally {
      await client.close();
    }
  });

  describe('over HTTP with an identity provider', () => {
    let idp: OidcFixture;
    let gateway: ListeningProcess;
    beforeEach(async () => {
      idp = await startOidcProvider();
      await policyYaml(dirs.configDir, { auth: { issuer: idp.issuer } });
      gateway = await startHttpGateway(dirs);
    });
    afterEach(async () => {
      await gateway.close();
      await idp.close();
    });

    for (const era of ['2025', '2026-07-28'] as const) {
      it(`a principal of group engineering sees and calls only its grants (${era} era)`, async () => {
        const token = await idp.signToken({ sub: 'alice', aud: gateway.url, groups: ['engineering'] });
        const transport = new StreamableHTTPClientTransport(new URL(gateway.url), {
          requestInit: { headers: { Authorization: `Bearer ${token}` } },
        });
        const answers = recordAnswers(transport);
        const client = new Client(
          { name: 'policy-test', version: '1' },
          era === '2026-07-28' ? { versionNegotiation: { mode: 'auto' } } : {},
        );
        await client.connect(transport);
        try {
          await exerciseGrants(client, answers);
        } finally {
          await client.close();
        }
      });
    }

    it('a principal of no granted group sees no server at all', async () => {
      const token = await idp.signToken({ sub: 'bob', aud: gateway.url, groups: ['interns'] });
      const transport = new StreamableHTTPClientTransport(new URL(gateway.url), {
        requestInit: { headers: { Authorization: `Bearer ${token}` } },
      });
      const answers = recordAnswers(transport);
      const client = new Client({ name: 'policy-test', version: '1' });
      await client.connect(transport);
      try {
        textOf(await client.callTool({ name: 'discover-all-tools', arguments: {} }));
        textOf(await client.callTool({ name: 'discover-all-tools', arguments: { query: 'echo' } }));
        for (const name of ['echo_', 'vault', 'hidden', 'hid_']) expect(answers.join('\n')).not.toContain(name);
      } finally {
        await client.close();
      }
    });
  });
});
