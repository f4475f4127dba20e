// The audit trail and rate limits, end to end: every tool call, equip, toolset change and refusal
// a client makes through loadout has its record, read back with `loadout audit`; a killed
// gateway loses at most the batch not yet written; a call over a rate limit gets a JSON-RPC error
// that says when to retry; over HTTP a refused token is recorded with no principal.
import { ProtocolError } from '@modelcontextprotocol/client';
import { readFile } from 'node:fs/promises';
import path from 'node:path';
import { stringify } from 'yaml';
import { writeFile } from 'node:fs/promises';
import { describe, expect, it } from 'vitest';
import { eventually, fixture, nodeServer, textOf, useGatewaySandbox, waitForExit } from '../helpers/gateway.js';
import { runCli } from '../helpers/cli.js';
import { connectHttp, startHttpGateway } from '../helpers/http.js';

const SERVERS = {
  echo: nodeServer(fixture('echo')),
  hidden: nodeServer(fixture('echo'), { env: { ECHO_TOOL_PREFIX: 'hid_' } }),
};
const POLICY = { local: { subject: 'dev', groups: ['eng'] }, rules: [{ groups: ['eng'], servers: ['echo'] }] };

interface Record_ {
  principal: { subject: string; issuer: string } | null;
  action: string;
  method: string;
  id?: string;
  replica?: string;
  server?: string;
  tool?: string;
  exposed_tool?: string;
  outcome: string;
  arguments_sha256?: string;
  arguments?: unknown;
  request_id?: number | string;
  detail?: string;
}

async function writeConfig(configDir: string, extra: Record<string, unknown>): Promise<void> {
  await writeFile(path.join(configDir, 'servers.yaml'), stringify({ servers: SERVERS, policy: POLICY, ...extra }));
}

async function auditRecords(dirs: Parameters<typeof runCli>[0], args: string[] = []): Promise<Record_[]> {
  const run = await runCli(dirs, ['audit', '--json', ...args]);
  expect(run.code, run.stderr).toBe(0);
  return (JSON.parse(run.stdout) as { records: Record_[] }).records;
}

describe('audit trail', () => {
  const sandbox = useGatewaySandbox();

  it('records every call, equip, toolset change and policy refusal of a stdio session, read back by loadout audit', async () => {
    await writeConfig(sandbox.dirs.configDir, {});
    const gateway = await sandbox.start();
    const { client } = gateway;
    await client.callTool({ name: 'equip-toolset', arguments: { name: 'all' } });
    expect(textOf(await client.callTool({ name: 'echo_echo', arguments: { text: 'hi' } }))).toBe('hi');
    expect((await client.callTool({ name: 'echo_fail', arguments: {} })).isError).toBe(true);
    expect(textOf(await client.callTool({ name: 'call-tool', arguments: { tool: 'echo.add', arguments: { a: 1, b: 2 } } }))).toContain('3');
    const denied = await client.callTool({ name: 'call-tool', arguments: { tool: 'hidden.hid_echo', arguments: { text: 'x' } } });
    expect(denied.isError).toBe(true);
    await client.callTool({ name: 'hidden_hid_echo', arguments: { text: 'x' } }).catch(() => undefined);
    await client.callTool({ name: 'build-toolset', arguments: { name: 'mine', tools: ['echo.echo'] } });
    await client.callTool({ name: 'discover-all-tools', arguments: { query: 'echo' } });
    await gateway.close();

    const records = await auditRecords(sandbox.dirs);
    // The server's own name (tool) and the name it was called by (exposed_tool) apart; a hidden
    // tool's refusal has only the name it was called by, as the agent was told it does not exist.
    expect(records.map(({ action, server, tool, exposed_tool, outcome }) => ({ action, server, tool, exposed_tool, outcome }))).toEqual([
      { action: 'equip', tool: 'equip-toolset', exposed_tool: 'equip-toolset', outcome: 'ok' },
      { action: 'tool-call', server: 'echo', tool: 'echo', exposed_tool: 'echo_echo', outcome: 'ok' },
      { action: 'tool-call', server: 'echo', tool: 'fail', exposed_tool: 'echo_fail', outcome: 'error' },
      { action: 'tool-call', server: 'echo', tool: 'add', exposed_tool: 'echo.add', outcome: 'ok' },
      { action: 'tool-call', exposed_tool: 'hidden.hid_echo', outcome: 'denied-policy' },
      { action: 'tool-call', exposed_tool: 'hidden_hid_echo', outcome: 'denied-policy' },
      { action: 'toolset-change', tool: 'build-toolset', exposed_tool: 'build-toolset', outcome: 'ok' },
      { action: 'meta-tool', tool: 'discover-all-tools', exposed_tool: 'discover-all-tools', outcome: 'ok' },
    ]);
    // Every record names the gateway process that answered, and has an id of its own.
    const replica = records[0]!.replica!;
    expect(replica).toMatch(/^[\w-]{21}$/);
    expect(records.map((record) => record.id)).toEqual(records.map((_, index) => `${replica}.${index + 1}`));
    expect((await auditRecords(sandbox.dirs, ['--tool', 'echo_echo'])).map((record) => record.tool)).toEqual(['echo']);
    expect((await auditRecords(sandbox.dirs, ['--tool', 'add'])).map((record) => record.exposed_tool)).toEqual(['echo.add']);
    expect(await auditRecords(sandbox.dirs, ['--replica', replica])).toHaveLength(records.length);
    expect(await auditRecords(sandbox.dirs, ['--replica', 'another'])).toHaveLength(0);
    for (const record of records) {
      expect(record).toMatchObject({ principal: { subject: 'dev', issuer: 'local' }, method: 'tools/call' });
      expect(record.arguments_sha256).toMatch(/^[0-9a-f]{64}$/);
      expect(record).not.toHaveProperty('arguments');
      expect(typeof record.request_id).toBe('number');
    }
    // The hidden tool's refusal tells the operator, not the agent: the agent's answer said "not found".
    expect(textOf(denied)).not.toContain('policy');
    expect(await auditRecords(sandbox.dirs, ['--server', 'echo'])).toHaveLength(3);
    expect(await auditRecords(sandbox.dirs, ['--principal', 'someone-else'])).toHaveLength(0);
    expect(await auditRecords(sandbox.dirs, ['--since', '1h'])).toHaveLength(8);
    const table = await runCli(sandbox.dirs, ['audit', '--principal', 'dev', '--server', 'echo']);
    expect(table.stdout).toMatch(new RegExp(`dev\\s+tool-call\\s+echo\\.fail\\s+echo_fail\\s+error\\s+\\d+\\s+${replica}`));
    expect((await runCli(sandbox.dirs, ['audit', '--since', 'yesterday'])).stderr).toContain('--since takes an ISO 8601 date or time');
  });

  it('records a prompt and a resource the policy hides as denied-policy (asked for or completed), and nothing for ones that do not exist', async () => {
    const rules = [{ groups: ['eng'], tools: ['content.simple_text'], prompts: ['content.simple_prompt'] }];
    await writeFile(
      path.join(sandbox.dirs.configDir, 'servers.yaml'),
      stringify({
        servers: { content: nodeServer(fixture('contentServer')) },
        policy: { local: { subject: 'dev', groups: ['eng'] }, rules },
      }),
    );
    const gateway = await sandbox.start({ args: ['--equip', 'all'] });
    const { client } = gateway;
    const granted = (await client.listPrompts()).prompts.find((prompt) => prompt.name.endsWith('simple_prompt'));
    expect(granted).toBeDefined();
    await client.getPrompt({ name: granted!.name });
    const refused = (call: Promise<unknown>) =>
      call.then(
        () => 'answered',
        (error: Error) => error.message,
      );
    const hiddenPrompt = await refused(client.getPrompt({ name: 'content_prompt_with_arguments', arguments: { arg1: 'a' } }));
    const missingPrompt = await refused(client.getPrompt({ name: 'content_prompt_with_argumentz' }));
    expect(hiddenPrompt.replace('arguments', 'NAME')).toBe(missingPrompt.replace('argumentz', 'NAME'));
    expect(await refused(client.readResource({ uri: 'test://static-text' }))).toContain('Resource not found');
    expect(await refused(client.readResource({ uri: 'test://static-texx' }))).toContain('Resource not found');
    const completion = { argument: { name: 'arg1', value: 'a' } };
    expect(await refused(client.complete({ ref: { type: 'ref/prompt', name: 'content_prompt_with_arguments' }, ...completion }))).toContain(
      'is not listed',
    );
    expect(await refused(client.complete({ ref: { type: 'ref/prompt', name: 'content_prompt_with_argumentz' }, ...completion }))).toContain(
      'is not listed',
    );
    await gateway.close();

    const records = await auditRecords(sandbox.dirs);
    expect(records.map(({ action, method, tool, outcome }) => ({ action, method, tool, outcome }))).toEqual([
      { action: 'prompt', method: 'prompts/get', tool: 'content_prompt_with_arguments', outcome: 'denied-policy' },
      { action: 'resource', method: 'resources/read', tool: 'test://static-text', outcome: 'denied-policy' },
      { action: 'prompt', method: 'completion/complete', tool: 'content_prompt_with_arguments', outcome: 'denied-policy' },
    ]);
    expect(records[0]).toMatchObject({ principal: { subject: 'dev' }, request_id: expect.any(Number) as number });
  });

  it('loses at most the last batch when the gateway is killed', async () => {
    await writeConfig(sandbox.dirs.configDir, { audit: { flush_ms: 50 } });
    const gateway = await sandbox.start({ args: ['--equip', 'all'] });
    for (const text of ['a', 'b', 'c']) await gateway.client.callTool({ name: 'echo_echo', arguments: { text } });
    // Written by the timer, with no close: the client still holds the session open.
    await eventually(async () => (await auditRecords(sandbox.dirs)).length === 3, 10_000, 'three records written');
    await gateway.client.callTool({ name: 'echo_echo', arguments: { text: 'last' } });
    process.kill(gateway.pid, 'SIGKILL');
    await waitForExit(gateway.pid);
    const run = await runCli(sandbox.dirs, ['audit', '--json']);
    const { records } = JSON.parse(run.stdout) as { records: Record_[] };
    // The last call's batch may or may not have been written; everything before it was.
    expect(records.length === 3 || records.length === 4).toBe(true);
    expect(records.slice(0, 3).every((record) => record.outcome === 'ok' && record.tool === 'echo')).toBe(true);
  });

  it('keeps the arguments themselves only with audit.arguments, and refuses a copy to stdout over stdio in one line', async () => {
    await writeConfig(sandbox.dirs.configDir, { audit: { arguments: true, copy_to: 'siem.jsonl' } });
    const gateway = await sandbox.start({ args: ['--equip', 'all'] });
    await gateway.client.callTool({ name: 'echo_echo', arguments: { text: 'kept' } });
    await gateway.close();
    const [record] = await auditRecords(sandbox.dirs);
    expect(record?.arguments).toEqual({ text: 'kept' });
    const copy = (await readFile(path.join(sandbox.dirs.configDir, 'siem.jsonl'), 'utf8')).trim().split('\n');
    expect(copy.map((line) => JSON.parse(line) as unknown)).toEqual([record]);

    await writeConfig(sandbox.dirs.configDir, { audit: { copy_to: 'stdout' } });
    const refused = await runCli(sandbox.dirs, ['serve']);
    expect(refused.code).not.toBe(0);
    expect(refused.stdout).toBe('');
    expect(refused.stderr.trim().split('\n')).toEqual([expect.stringContaining('audit.copy_to: stdout needs `serve --http`')]);
  });

  it("refuses a call over a principal's limit on a server with a JSON-RPC error that says when to retry, and records it", async () => {
    await writeConfig(sandbox.dirs.configDir, { limits: { server_calls_per_minute: 2 } });
    const gateway = await sandbox.start({ args: ['--equip', 'all'] });
    const { client } = gateway;
    await client.callTool({ name: 'echo_echo', arguments: { text: '1' } });
    await client.callTool({ name: 'call-tool', arguments: { tool: 'echo.echo', arguments: { text: '2' } } });
    for (const call of [
      () => client.callTool({ name: 'echo_echo', arguments: { text: '3' } }),
      () => client.callTool({ name: 'call-tool', arguments: { tool: 'echo.echo', arguments: { text: '3' } } }),
    ]) {
      const error = await call().then(
        () => undefined,
        (thrown: unknown) => thrown,
      );
      expect(error).toBeInstanceOf(ProtocolError);
      const { code, message, data } = error as ProtocolError;
      expect(code).toBe(-32029);
      expect(message).toMatch(/at most 2 calls of server 'echo' a minute for each caller; retry in \d+ s/);
      expect(data).toMatchObject({ limit: 'server_calls_per_minute', server: 'echo', callsPerMinute: 2 });
      expect((data as { retryAfterSeconds: number }).retryAfterSeconds).toBeGreaterThanOrEqual(1);
    }
    // Meta-tools reach no server: only a per-principal limit counts them.
    expect((await client.callTool({ name: 'get-active-toolset', arguments: {} })).isError).toBeFalsy();
    // A raised limit applies without a restart.
    await writeConfig(sandbox.dirs.configDir, { limits: { server_calls_per_minute: 100 } });
    await eventually(
      () =>
        client.callTool({ name: 'echo_echo', arguments: { text: 'again' } }).then(
          () => true,
          () => false,
        ),
      10_000,
      'the raised limit',
    );
    await gateway.close();
    const limited = (await auditRecords(sandbox.dirs)).filter((record) => record.outcome === 'rate-limited');
    expect(limited.length).toBeGreaterThanOrEqual(2);
    expect(limited[0]).toMatchObject({
      server: 'echo',
      tool: 'echo',
      exposed_tool: 'echo_echo',
      detail: expect.stringContaining('retry in') as string,
    });
  });
});

describe('audit trail over HTTP', () => {
  const sandbox = useGatewaySandbox();

  it('records a refused token with no principal, a token holder by its principal, and copies records to stdout', async () => {
    await writeFile(
      path.join(sandbox.dirs.configDir, 'servers.yaml'),
      stringify({ servers: { echo: SERVERS.echo }, audit: { copy_to: 'stdout', flush_ms: 50 } }),
    );
    const gateway = await startHttpGateway(sandbox.dirs, ['--token', 'good-token', '--equip', 'all']);
    try {
      const refused = await fetch(gateway.url, { method: 'POST', headers: { Authorization: 'Bearer bad-token' }, body: '{}' });
      expect(refused.status).toBe(401);
      const http = await connectHttp(gateway.url, { token: 'good-token' });
      expect(textOf(await http.client.callTool({ name: 'echo_echo', arguments: { text: 'over http' } }))).toBe('over http');
      await http.close();
      await eventually(() => gateway.output().includes('"outcome":"ok"'), 10_000, 'the copy on stdout');
    } finally {
      await gateway.close();
    }
    const records = await auditRecords(sandbox.dirs);
    expect(records[0]).toMatchObject({ principal: null, action: 'request', method: 'POST /mcp', outcome: 'denied-authorization' });
    expect(records[0]?.detail).toMatch(/^401: /);
    expect(JSON.stringify(records)).not.toContain('bad-token');
    expect(records[1]).toMatchObject({ principal: { issuer: 'token' }, action: 'tool-call', server: 'echo', tool: 'echo', outcome: 'ok' });
    expect(gateway.output()).toContain('"outcome":"denied-authorization"');
  });
});
