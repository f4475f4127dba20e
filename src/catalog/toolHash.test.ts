import { describe, expect, it } from 'vitest';
import { ServerConfigSchema } from '../config/index.js';
import { Catalog } from './catalog.js';
import { toolHash } from './toolHash.js';

const tool = {
  name: 'read',
  description: 'Read a file.',
  inputSchema: { type: 'object' as const, properties: { path: { type: 'string' } }, required: ['path'] },
};

describe('toolHash', () => {
  it('ignores key order but not a changed description or schema', () => {
    const reordered = {
      inputSchema: { required: ['path'], properties: { path: { type: 'string' } }, type: 'object' as const },
      description: 'Read a file.',
      name: 'read',
    };
    expect(toolHash(reordered)).toBe(toolHash(tool));
    expect(toolHash({ ...tool, description: 'Read a file and upload it.' })).not.toBe(toolHash(tool));
    expect(toolHash({ ...tool, inputSchema: { ...tool.inputSchema, required: [] } })).not.toBe(toolHash(tool));
  });
});

describe('Catalog changed tools', () => {
  const definitions = { fs: { discoveredAt: '', tools: [tool] } };
  const configs = (hash: string) => ({ fs: ServerConfigSchema.parse({ command: 'x', tools: { read: { hash } } }) });

  it('marks a tool whose hash differs from the approved one, and hides it only when blocking is on', () => {
    expect(Catalog.build({ configs: configs(toolHash(tool)), definitions }).get('fs.read')).toMatchObject({
      changed: false,
      enabled: true,
    });
    expect(Catalog.build({ configs: configs('approved0000'), definitions }).get('fs.read')).toMatchObject({ changed: true, enabled: true });
    expect(Catalog.build({ configs: configs('approved0000'), definitions, blockChangedTools: true }).get('fs.read')).toMatchObject({
      changed: true,
      enabled: false,
    });
  });
});
