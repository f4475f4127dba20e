import { readFile, writeFile } from 'node:fs/promises';
import path from 'node:path';
import { describe, expect, it } from 'vitest';
import { useTempDir } from '../../test/helpers/tempDir.js';
import { recordDiscoveredTools } from './switchboard.js';

const BROKEN_ENTRY = `  # a typo: comand
  typo:
    comand: node
    tools:
      old: { enabled: false }
`;

describe('recordDiscoveredTools', () => {
  const tempDir = useTempDir('loadout-switchboard-');
  const tool = (name: string) => ({ name, description: `${name} it`, inputSchema: { type: 'object' as const } });

  it("merges the valid servers' tools and leaves a broken entry as it was", async () => {
    const file = path.join(tempDir(), 'servers.yaml');
    await writeFile(file, `servers:\n  echo:\n    command: node\n${BROKEN_ENTRY}`);
    const { config, reports } = await recordDiscoveredTools(file, { echo: [tool('echo')], typo: [tool('new')] });
    expect(Object.keys(config.servers)).toEqual(['echo']);
    expect(reports.get('echo')?.added).toEqual(['echo']);
    expect(reports.has('typo')).toBe(false);
    const written = await readFile(file, 'utf8');
    expect(written).toMatch(/^ {2}echo:\n {4}command: node\n {4}tools:\n {6}echo:\n {8}enabled: true\n/m);
    expect(written.endsWith(BROKEN_ENTRY)).toBe(true);
  });

  it('writes nothing when the file is invalid outside a server entry', async () => {
    const file = path.join(tempDir(), 'servers.yaml');
    const text = 'servers:\n  echo:\n    command: node\ngatway: {}\n';
    await writeFile(file, text);
    await expect(recordDiscoveredTools(file, { echo: [tool('echo')] })).rejects.toMatchObject({ code: 'CONFIG_INVALID' });
    expect(await readFile(file, 'utf8')).toBe(text);
  });
});
