import { describe, expect, it } from 'vitest';
import { parseDocument } from 'yaml';
import { importedServersYaml } from './mcpImport.js';
import { proposeSandbox, proposedAllowList } from './sandboxProposals.js';
import { ServersFileSchema } from './schema.js';

describe('sandbox proposals', () => {
  it('knows a package by what npx or uvx runs, version or not, and adds the registry it is fetched from', () => {
    expect(proposedAllowList({ command: 'npx', args: ['-y', '@modelcontextprotocol/server-github@2025.4.8'] })).toEqual({
      pkg: '@modelcontextprotocol/server-github',
      allow: ['api.github.com', 'registry.npmjs.org'],
    });
    expect(proposedAllowList({ command: '/usr/local/bin/uvx', args: ['mcp-server-time'] })?.allow).toEqual([
      'pypi.org',
      'files.pythonhosted.org',
    ]);
    expect(proposedAllowList({ command: 'npx', args: ['-y', 'some-unknown-mcp'] })).toBeUndefined();
    expect(proposedAllowList({ command: 'node', args: ['server.js'] })).toBeUndefined();
    expect(proposedAllowList({ url: 'https://mcp.example.com/mcp' })).toBeUndefined();
  });

  it('proposes it in a comment above the entry, in servers.yaml written anew and added to, leaving the config as it was', () => {
    const servers = {
      github: { command: 'npx', args: ['-y', '@modelcontextprotocol/server-github'] },
      own: { command: 'node', args: ['server.js'] },
    };
    const text = importedServersYaml({ servers, found: [], skipped: [] }, 'loadout init');
    expect(text).toContain(
      '  # @modelcontextprotocol/server-github reaches only these hosts: add under github to sandbox it (docs/sandbox.md):\n' +
        '  #   sandbox: { network: { allow: [api.github.com, registry.npmjs.org] } }\n  github:',
    );
    expect(text.match(/sandbox:/g)).toHaveLength(1);
    expect(ServersFileSchema.parse(parseDocument(text).toJS()).servers.github).toMatchObject({ sandbox: false });

    const document = parseDocument('servers:\n  own: { command: node }\n');
    document.setIn(['servers', 'memory'], document.createNode({ command: 'npx', args: ['-y', '@modelcontextprotocol/server-memory'] }));
    proposeSandbox(document, 'memory');
    expect(document.toString()).toContain('#   sandbox: { network: { allow: [registry.npmjs.org] } }\n  memory:');
  });
});
