import { describe, expect, it } from 'vitest';
import { spellForClient } from './clientSpelling.js';

const NAMES = ['call-tool', 'discover-all-tools', 'equip'];

describe('spellForClient', () => {
  it("spells the meta-tools' dashes as underscores for Codex CLI, whose model sees them so", () => {
    expect(spellForClient('Use call-tool, or discover-all-tools first; equip later.', 'codex-mcp-client', NAMES)).toBe(
      'Use call_tool, or discover_all_tools first; equip later.',
    );
  });

  it('leaves the words as they are for other clients, and before the client is known', () => {
    const text = 'Use call-tool.';
    expect(spellForClient(text, 'gemini-cli-mcp-client', NAMES)).toBe(text);
    expect(spellForClient(text, 'claude-code', NAMES)).toBe(text);
    expect(spellForClient(text, undefined, NAMES)).toBe(text);
  });
});
