import { describe, expect, it } from 'vitest';
import { parseYamlFile } from './yamlFile.js';
import { ServersFileSchema, ToolsetSchema } from './schema.js';

const messageOf = (run: () => unknown): string => {
  try {
    run();
  } catch (error) {
    return (error as Error).message;
  }
  throw new Error('expected a failure');
};

describe('unknown keys in our files', () => {
  it.each([
    ['servers:\n  a:\n    comand: x\n', "f:3:5: unknown key 'comand' (did you mean 'command'?) at servers.a"],
    [
      'servers:\n  a:\n    command: x\n    idle_timeout: 3\n',
      "f:4:5: unknown key 'idle_timeout' (did you mean 'idle_timeout_minutes'?) at servers.a",
    ],
    ['servers:\n  a:\n    url: http://h/\n    hedaers: {}\n', "f:4:5: unknown key 'hedaers' (did you mean 'headers'?) at servers.a"],
    ['server:\n  a: {}\n', "f:1:1: unknown key 'server' (did you mean 'servers'?)"],
    ['optimization:\n  modle: m\n', "f:2:3: unknown key 'modle' (did you mean 'model'?) at optimization"],
    ['gateway:\n  colour: red\n', "f:2:3: unknown key 'colour' at gateway"],
  ])('names the typo in %j, not what it leaves missing', (yaml, message) => {
    expect(messageOf(() => parseYamlFile(yaml, 'f', ServersFileSchema, 'CONFIG_INVALID'))).toBe(message);
  });

  it('reports every unknown key of one map in one line', () => {
    expect(messageOf(() => parseYamlFile('name: x\ntool: []\ndesc: d\n', 'f', ToolsetSchema, 'TOOLSET_INVALID'))).toBe(
      "f:2:1: unknown key 'tool' (did you mean 'tools'?); unknown key 'desc' (did you mean 'description'?)",
    );
  });
});
