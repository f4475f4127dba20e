// The map under a heading that says how its lines read: a line per server, or groups of servers.
import { describe, expect, it } from 'vitest';
import pino from 'pino';
import type { ServerMapEntry } from '../../catalog/index.js';
import { mapAnswer, sessionInstructions } from './catalogMap.js';

const entry = (server: string): ServerMapEntry => ({
  server,
  summary: { server, purpose: 'repositories, pull requests, issues', tools: 12 },
  state: { kind: 'ready' },
});
const instructionsOf = (entries: ServerMapEntry[]) =>
  sessionInstructions({
    catalog: { serverMap: () => Promise.resolve(entries) },
    logger: pino({ level: 'silent' }),
  } as unknown as Parameters<typeof sessionInstructions>[0]);

describe('the map as the agent reads it', () => {
  it('heads a line per server with how a line reads', async () => {
    expect(await instructionsOf([entry('github')])).toMatch(/\nServers \(tools: what for\):\ngithub \(12 tools\): repositories/);
  });

  it('heads grouped servers as groups, so a group label does not read as a server', async () => {
    const many = Array.from({ length: 120 }, (_, index) => entry(`git-host-${index}`));
    const instructions = await instructionsOf(many);
    expect(instructions).toMatch(/\nServers by what they are for \(group: server names\):\ncode: git-host-/);
    expect(mapAnswer(many).split('\n')[1]).toBe('Servers by what they are for (group: server names):');
  });
});
