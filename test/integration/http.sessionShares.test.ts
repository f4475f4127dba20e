// 2025-era sessions of several principals on one `serve --http`: --max-sessions is shared fairly
// (one caller's new sessions never end another's that holds fewer), --max-sessions-per-principal
// caps one caller, and a request on another caller's session is refused and audited.
import { describe, expect, it } from 'vitest';
import { fixture, nodeServer, writeServersYaml } from '../helpers/gateway.js';
import { runCli } from '../helpers/cli.js';
import { MCP_HEADERS, useHttpHarness, type HttpClient } from '../helpers/http.js';

const ALICE = 'alice-token';
const BOB = 'bob-token';

describe('loadout serve --http: sessions of several principals', () => {
  const harness = useHttpHarness();

  // A tools/list on `client`'s session sent raw: its status says whether the session is still held.
  async function statusOf(client: HttpClient, token: string): Promise<number> {
    const response = await fetch(harness().gateway.url, {
      method: 'POST',
      headers: { ...MCP_HEADERS, Authorization: `Bearer ${token}`, 'Mcp-Session-Id': client.transport.sessionId! },
      body: JSON.stringify({ jsonrpc: '2.0', id: 7, method: 'tools/list', params: {} }),
    });
    await response.body?.cancel();
    return response.status;
  }

  // A gateway started with `args` and both tokens, with one session of Alice's, then `count` of Bob's.
  async function sessionsOf(args: string[], count: number): Promise<{ alice: HttpClient; bobs: HttpClient[] }> {
    await writeServersYaml(harness().dirs.configDir, { echo: nodeServer(fixture('echo')) });
    await harness().start(['--token', ALICE, '--token', BOB, ...args]);
    const alice = await harness().connect({ token: ALICE });
    const bobs: HttpClient[] = [];
    for (let i = 0; i < count; i++) bobs.push(await harness().connect({ token: BOB }));
    return { alice, bobs };
  }

  it("keeps Alice's one session while Bob starts four under --max-sessions 4, and ends one of Bob's for Alice's second", async () => {
    const { alice, bobs } = await sessionsOf(['--max-sessions', '4'], 4);
    expect(await statusOf(alice, ALICE)).toBe(200);
    // Bob's first session was his idle longest: his fourth took its place.
    expect(await Promise.all(bobs.map((bob) => statusOf(bob, BOB)))).toEqual([404, 200, 200, 200]);
    // Alice, holding fewer, may still start one: it ends Bob's idle longest, who holds more.
    const again = await harness().connect({ token: ALICE });
    expect([await statusOf(alice, ALICE), await statusOf(again, ALICE)]).toEqual([200, 200]);
    expect(await Promise.all(bobs.map((bob) => statusOf(bob, BOB)))).toEqual([404, 404, 200, 200]);
  });

  it("ends a principal's own session idle longest past --max-sessions-per-principal, and leaves the others", async () => {
    const { alice, bobs } = await sessionsOf(['--max-sessions-per-principal', '2'], 3);
    expect(await Promise.all(bobs.map((bob) => statusOf(bob, BOB)))).toEqual([404, 200, 200]);
    expect(await statusOf(alice, ALICE)).toBe(200);
  });

  it("refuses a request on another principal's session with 403 and records it as denied-session", async () => {
    await writeServersYaml(harness().dirs.configDir, { echo: nodeServer(fixture('echo')) }, { audit: { flush_ms: 50 } });
    await harness().start(['--token', ALICE, '--token', BOB]);
    const alice = await harness().connect({ token: ALICE });
    expect(await statusOf(alice, BOB)).toBe(403);
    expect(await statusOf(alice, ALICE)).toBe(200);
    await harness().gateway.close();
    const run = await runCli(harness().dirs, ['audit', '--json']);
    expect(run.code, run.stderr).toBe(0);
    const records = (
      JSON.parse(run.stdout) as { records: Array<{ outcome: string; principal: { issuer: string } | null; method: string }> }
    ).records;
    expect(records.filter((record) => record.outcome === 'denied-session')).toEqual([
      expect.objectContaining({ principal: expect.objectContaining({ issuer: 'token' }), method: 'POST /mcp' }),
    ]);
  });
});
