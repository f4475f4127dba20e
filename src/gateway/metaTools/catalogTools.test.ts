// discover-all-tools tells the agent, in its own description, that query and server combine.
import { describe, expect, it } from 'vitest';
import { discoverAllTools } from './catalogTools.js';

describe('discover-all-tools', () => {
  it('says that query and server combine to rank within one server, with an example', () => {
    expect(discoverAllTools.description).toMatch(/together they rank within one server/);
    const example = /\{"query": "[^"]+", "server": "[^"]+"\}/.exec(discoverAllTools.description)?.[0];
    expect(discoverAllTools.input.safeParse(JSON.parse(example ?? '{}')).success).toBe(true);
    expect(example).toBeDefined();
  });
});
