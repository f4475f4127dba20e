import { describe, expect, it } from 'vitest';
import { parseJsonText, setJsonValue } from './jsonFile.js';

describe('setJsonValue', () => {
  const text = '{\n  // a\n  "a": 1,\n  // b\n  "b": {"x": 2},\n  "c": 3 // c\n}\n';

  it('removes a first property and its line, keeping the comment above the next one', () => {
    expect(setJsonValue(text, ['a'], undefined)).toBe('{\n  // a\n  // b\n  "b": {"x": 2},\n  "c": 3 // c\n}\n');
  });

  it('removes a last property with the comma before it', () => {
    // The comment on the removed line stays (comments are never dropped).
    expect(setJsonValue(text, ['c'], undefined)).toBe('{\n  // a\n  "a": 1,\n  // b\n  "b": {"x": 2}\n   // c\n}\n');
    expect(setJsonValue('{"a": 1, "b": 2}', ['b'], undefined)).toBe('{"a": 1 }');
    expect(setJsonValue('{"m": {"a": 1}}', ['m', 'a'], undefined)).toBe('{"m": {}}');
  });

  it('leaves the text alone when the property is not there', () => {
    expect(setJsonValue(text, ['zz'], undefined)).toBe(text);
  });

  it("adds in the file's own indentation", () => {
    expect(setJsonValue('{\n\t"a": 1\n}\n', ['m', 'x'], { command: 'c' })).toBe(
      '{\n\t"a": 1,\n\t"m": {\n\t\t"x": {\n\t\t\t"command": "c"\n\t\t}\n\t}\n}\n',
    );
    expect(JSON.parse(setJsonValue('', ['mcpServers', 'loadout'], { command: 'c' }))).toEqual({
      mcpServers: { loadout: { command: 'c' } },
    });
  });

  it('keeps a one-line file on one line', () => {
    const oneLine = '{"numStartups":3,"mcpServers":{"echo":{"command":"e"}}}\n';
    expect(setJsonValue(oneLine, ['mcpServers', 'loadout'], { command: 'loadout', args: ['serve'] })).toBe(
      '{"numStartups":3,"mcpServers":{"echo":{"command":"e"},"loadout": {"command":"loadout","args":["serve"]}}}\n',
    );
  });
});

describe('parseJsonText', () => {
  it('accepts comments only where the format has them', () => {
    expect(parseJsonText('f', '// c\n{"a": 1,}', true)).toEqual({ a: 1 });
    expect(() => parseJsonText('f', '// c\n{"a": 1}', false)).toThrow(/^f:1:1: InvalidCommentToken/);
    expect(() => parseJsonText('f', '[1]', false)).toThrow(/not a JSON object/);
  });
});
