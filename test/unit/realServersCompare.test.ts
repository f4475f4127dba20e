import { describe, expect, it } from 'vitest';
import { compareList, describeDifference, flattenedName } from '../../scripts/real-servers/compare.js';

const renameTools = (names: Record<string, string>) => (item: Record<string, unknown>) => names[item.name as string];
const sameKey = (field: string) => (item: Record<string, unknown>) => item[field] as string;

describe('real-servers comparison', () => {
  it('finds a renamed definition identical when only its name changed, in place', () => {
    const direct = [{ annotations: {}, name: 'scrape', inputSchema: { type: 'object' } }];
    const loadout = [{ annotations: {}, name: 'web_scrape', inputSchema: { type: 'object' } }];
    expect(compareList('tools', direct, loadout, renameTools({ scrape: 'web_scrape' }))).toEqual([]);
  });

  it('reports a definition whose keys arrive in another order', () => {
    const direct = [{ name: 'greeting', uriTemplate: 'greeting://{name}' }];
    const loadout = [{ uriTemplate: 'greeting://{name}', name: 'greeting' }];
    expect(compareList('resourceTemplates', direct, loadout, sameKey('uriTemplate'))).toEqual([
      'greeting://{name}: (top): key order differs: direct [name, uriTemplate], loadout [uriTemplate, name]',
    ]);
  });

  it('moves a name loadout put first back to where the server had it before comparing', () => {
    const direct = [{ description: 'd', name: 'scrape' }];
    const loadout = [{ name: 'web_scrape', description: 'd' }];
    expect(compareList('tools', direct, loadout, renameTools({ scrape: 'web_scrape' }))).toEqual([
      'scrape: (top): key order differs: direct [description, name], loadout [name, description]',
    ]);
  });

  it('names the nested field that differs, and fields added or dropped', () => {
    expect(describeDifference({ a: { b: [1, 2] } }, { a: { b: [1, 3] } })).toBe('.a.b[1]: direct 2, loadout 3');
    expect(describeDifference({ a: 1, _meta: {} }, { a: 1 })).toBe('(top): loadout lacks "_meta"');
    expect(describeDifference({ a: 1 }, { a: 1, x: true })).toBe('(top): loadout adds "x"');
    expect(describeDifference({ a: 1 }, { a: 1 })).toBeUndefined();
  });

  it('lists what is missing and what is extra, and an empty list in one line', () => {
    const direct = [{ name: 'a' }, { name: 'b' }];
    expect(compareList('prompts', direct, [{ name: 's_a' }, { name: 's_c' }], (item) => flattenedName('s', item.name as string))).toEqual([
      'missing b (as s_b)',
      'extra s_c',
    ]);
    expect(compareList('prompts', direct, [], (item) => flattenedName('s', item.name as string))).toEqual(['none listed (direct: 2)']);
  });

  it('pairs a prompt whose name loadout cut short and gave a hash suffix', () => {
    const direct = [{ name: 'a-very-long-prompt-name', description: 'x' }];
    const loadout = [{ name: 'srv_a-very-lo_1a2b3c', description: 'x' }];
    expect(compareList('prompts', direct, loadout, (item) => flattenedName('srv', item.name as string))).toEqual([]);
  });

  it('reports the same definitions listed in another order', () => {
    const direct = [{ uri: 'a://1' }, { uri: 'a://2' }];
    expect(compareList('resources', direct, [{ uri: 'a://2' }, { uri: 'a://1' }], sameKey('uri'))).toEqual([
      'same definitions in another order',
    ]);
  });

  it('flattens a name as loadout does', () => {
    expect(flattenedName('my-server', 'tools.list/all')).toBe('my-server_tools_list_all');
  });
});
