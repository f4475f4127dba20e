// `npm run demo` runs the whole scripted session against the bundled servers, cleans up, and ends
// by naming the next command.
import { execFile } from 'node:child_process';
import { existsSync } from 'node:fs';
import path from 'node:path';
import { promisify } from 'node:util';
import { describe, expect, it } from 'vitest';
import { META_TOOL_NAMES, ROOT } from '../helpers/gateway.js';

describe('npm run demo', () => {
  it('walks through discover, build, equip, call, unequip and removes its temp dir', async () => {
    const { stdout } = await promisify(execFile)(process.execPath, [path.join(ROOT, 'dist/demo/demo.js')], {
      env: { ...process.env, NO_COLOR: '1' },
    });
    for (const heading of ['1. connect', '2. discover', '3. build', '4. equip', '5. call', '8. unequip']) expect(stdout).toContain(heading);
    expect(stdout).toContain(`${META_TOOL_NAMES.length} meta-tools`);
    expect(stdout).toContain("Equipped 'todo': 3 tools: files_read_text_file, text_count_words");
    expect(stdout).toMatch(/meta-tools:\s+files_read_text_file\s+text_count_words\s+memory_create_entities/);
    expect(stdout.match(/notifications\/tools\/list_changed/g)).toHaveLength(2);
    expect(stdout).toContain('17 words, 4 lines, 83 characters');
    expect(stdout).toContain('ship-loadout-to-the-team');
    expect(stdout).toMatch(/Done in [\d.]+ s/);
    // It ends by naming the reader's next command.
    expect(stdout.trimEnd().split('\n').at(-1)).toBe(
      'Next, with your own servers: loadout setup claude-code --dry-run (shows what it would change, and changes nothing)',
    );
    // The deprecated read_file is shown below its replacement.
    expect(stdout.indexOf('files.read_text_file —')).toBeLessThan(stdout.indexOf('files.read_file —'));
    const tempDir = /temp dir (\S+)\)/.exec(stdout)![1]!;
    expect(existsSync(tempDir)).toBe(false);
  });
});
