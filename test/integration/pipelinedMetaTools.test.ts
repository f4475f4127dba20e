// A client may send requests without waiting for answers. Meta-tools that change state must then
// take effect in the order they were sent, over real stdio, with every request written at once.
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { fixture, makeTempDirs, nodeServer, writeServersYaml, type TempDirs } from '../helpers/gateway.js';
import { startRawGateway, type RawGateway, type RawMessage } from '../helpers/rawStdio.js';

const textOf = (message: RawMessage): string =>
  ((message.result?.content as Array<{ text: string }> | undefined) ?? []).map((part) => part.text).join('\n');

describe('pipelined meta-tool requests of one session', () => {
  let dirs: TempDirs;
  let gateway: RawGateway;
  beforeAll(async () => {
    dirs = await makeTempDirs();
    // The raw client never re-reads tools/list, so equips need not wait long for it.
    await writeServersYaml(dirs.configDir, { echo: nodeServer(fixture('echo')) }, { gateway: { relist_wait_ms: 50 } });
    gateway = await startRawGateway(dirs);
  });
  afterAll(async () => {
    await gateway.close();
    await dirs.cleanup();
  });

  const call = (id: string, name: string, args: Record<string, unknown> = {}): void =>
    gateway.send({ jsonrpc: '2.0', id, method: 'tools/call', params: { name, arguments: args } });

  it('take effect in arrival order: build then equip, equip then unequip, and a read sees them all', async () => {
    for (let round = 0; round < 5; round++) {
      const id = (step: string): string => `${round}-${step}`;
      call(id('build'), 'build-toolset', { name: `piped${round}`, tools: ['echo.echo'], equip: false });
      call(id('equip'), 'equip-toolset', { name: `piped${round}` });
      call(id('unequip'), 'unequip-toolset');
      call(id('equip-again'), 'equip-toolset', { name: `piped${round}` });
      call(id('call'), 'echo_echo', { text: 'in order' });
      call(id('unequip-again'), 'unequip-toolset');
      call(id('active'), 'get-active-toolset');
      const answers = await Promise.all(
        ['build', 'equip', 'unequip', 'equip-again', 'call', 'unequip-again', 'active'].map((step) => gateway.answer(id(step))),
      );
      const [built, equipped, unequipped, reequipped, called, unequippedAgain, active] = answers.map(textOf);
      expect(built).toContain(`Saved toolset 'piped${round}'`);
      expect(equipped).toContain(`Equipped 'piped${round}'`);
      expect(unequipped).toContain(`Unequipped 'piped${round}'`);
      expect(reequipped).toContain(`Equipped 'piped${round}'`);
      expect(called).toBe('in order');
      expect(unequippedAgain).toContain(`Unequipped 'piped${round}'`);
      expect(active).toContain('No toolset is equipped');
      expect(answers.filter((answer) => answer.result?.isError)).toEqual([]);
    }
  });
});
