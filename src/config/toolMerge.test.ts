import { describe, expect, it } from 'vitest';
import { parseDocument } from 'yaml';
import { mergeDiscoveredTools, type DiscoveredTool } from './toolMerge.js';

const tool = (name: string, description = `${name} does things`, hash = `h-${name}`): DiscoveredTool => ({ name, description, hash });

function merge(text: string, discovered: DiscoveredTool[], acceptChanged = false) {
  const document = parseDocument(text);
  const report = mergeDiscoveredTools(document, 'git', discovered, { acceptChanged });
  return {
    report,
    text: document.toString({ lineWidth: 0 }),
    js: document.toJS() as { servers: { git: { tools: Record<string, Record<string, unknown> | null> } } },
  };
}

describe('mergeDiscoveredTools', () => {
  it('adds new tools as enabled with their description and hash', () => {
    const { report, js } = merge('servers:\n  git:\n    command: git-mcp\n', [tool('status')]);
    expect(js.servers.git.tools.status).toEqual({ enabled: true, description: 'status does things', hash: 'h-status' });
    expect(report?.added).toEqual(['status']);
  });

  it('keeps a tool the user disabled disabled', () => {
    const { js, report } = merge('servers:\n  git:\n    command: x\n    tools:\n      push: { enabled: false }\n', [tool('push')]);
    expect(js.servers.git.tools.push).toMatchObject({ enabled: false, description: 'push does things' });
    expect(report?.added).toEqual([]);
  });

  it("keeps the user's search keywords of a tool across refreshes", () => {
    const { js } = merge('servers:\n  git:\n    command: x\n    tools:\n      push: { enabled: true, keywords: [upload, publish] }\n', [
      tool('push'),
    ]);
    expect(js.servers.git.tools.push).toMatchObject({ enabled: true, keywords: ['upload', 'publish'], description: 'push does things' });
  });

  it('marks a tool the server no longer offers stale and keeps its setting', () => {
    const { js, report } = merge('servers:\n  git:\n    command: x\n    tools:\n      old: { enabled: false, hash: h-old }\n', [
      tool('new'),
    ]);
    expect(js.servers.git.tools.old).toEqual({ enabled: false, hash: 'h-old', stale: true });
    expect(report?.stale).toEqual(['old']);
  });

  it('clears stale when the tool comes back', () => {
    const { js, report } = merge(
      'servers:\n  git:\n    command: x\n    tools:\n      status: { enabled: true, stale: true, hash: h-status }\n',
      [tool('status')],
    );
    expect(js.servers.git.tools.status).not.toHaveProperty('stale');
    expect(report?.returned).toEqual(['status']);
  });

  it('updates the description to the discovered text', () => {
    const { js } = merge('servers:\n  git:\n    command: x\n    tools:\n      status: { description: old text }\n', [
      tool('status', 'new text'),
    ]);
    expect(js.servers.git.tools.status?.description).toBe('new text');
  });

  it('never overwrites a user-set value and reports a changed hash instead of replacing it', () => {
    const { js, report } = merge('servers:\n  git:\n    command: x\n    tools:\n      status: { enabled: false, hash: approved }\n', [
      tool('status', 'x', 'different'),
    ]);
    expect(js.servers.git.tools.status).toMatchObject({ enabled: false, hash: 'approved' });
    expect(report?.changed).toEqual(['status']);
  });

  it('stores the new hash of a changed tool only when asked to accept changes', () => {
    const { js, report } = merge(
      'servers:\n  git:\n    command: x\n    tools:\n      status: { hash: approved }\n',
      [tool('status', 'x', 'different')],
      true,
    );
    expect(js.servers.git.tools.status?.hash).toBe('different');
    expect(report?.accepted).toEqual(['status']);
  });

  it('turns a bare tool key into a full entry without calling it new', () => {
    const { js, report } = merge('servers:\n  git:\n    command: x\n    tools:\n      status:\n', [tool('status')]);
    expect(js.servers.git.tools.status).toEqual({ enabled: true, description: 'status does things', hash: 'h-status' });
    expect(report?.added).toEqual([]);
  });

  it('preserves comments and key order', () => {
    const text = [
      '# my servers',
      'servers:',
      '  git:',
      '    command: x # the git server',
      '    tools:',
      '      # never let the agent push',
      '      push: { enabled: false }',
      '      status: { enabled: true }',
      '  other:',
      '    command: y',
      '',
    ].join('\n');
    const { text: next } = merge(text, [tool('status'), tool('push'), tool('log')]);
    expect(next).toContain('# my servers');
    expect(next).toContain('command: x # the git server');
    expect(next).toContain('# never let the agent push');
    expect(next.indexOf('push')).toBeLessThan(next.indexOf('status'));
    expect(next.indexOf('status')).toBeLessThan(next.indexOf('log'));
    expect(next.indexOf('log')).toBeLessThan(next.indexOf('other:'));
  });

  it('leaves the document alone for a server that is no longer configured', () => {
    const document = parseDocument('servers:\n  other:\n    command: y\n');
    expect(mergeDiscoveredTools(document, 'git', [tool('status')])).toBeUndefined();
    expect(document.toString()).toBe('servers:\n  other:\n    command: y\n');
  });

  it('is idempotent: a second merge of the same tools changes nothing', () => {
    const first = merge('servers:\n  git:\n    command: x\n', [tool('a'), tool('b')]);
    const second = merge(first.text, [tool('a'), tool('b')]);
    expect(second.text).toBe(first.text);
    expect(second.report).toEqual({ server: 'git', added: [], stale: [], returned: [], changed: [], accepted: [] });
  });
});
