import { describe, expect, it } from 'vitest';
import { ResourceUriIndex, prefixedResourceUri } from './resourceUris.js';

const index = new ResourceUriIndex(
  new Map([
    [
      'a',
      {
        resources: [
          { uri: 'file:///shared', name: 's' },
          { uri: 'mem://only-a', name: 'o' },
        ],
        resourceTemplates: [{ uriTemplate: 'doc://{id}', name: 'd' }],
      },
    ],
    [
      'b',
      {
        resources: [{ uri: 'file:///shared', name: 's' }],
        resourceTemplates: [
          { uriTemplate: 'doc://{id}', name: 'd' },
          { uriTemplate: 'b://{x}/raw', name: 'r' },
        ],
      },
    ],
  ]),
);
const both = new Set(['a', 'b']);

describe('ResourceUriIndex', () => {
  it('keeps a unique URI unchanged and prefixes a shared one for each owner', () => {
    expect(index.exposedUri('a', 'mem://only-a')).toBe('mem://only-a');
    expect(index.exposedUri('a', 'file:///shared')).toBe('loadout://a/file:///shared');
    expect(index.exposedUri('b', 'file:///shared')).toBe(prefixedResourceUri('b', 'file:///shared'));
    expect(index.exposedTemplate('b', 'doc://{id}')).toBe('loadout://b/doc://{id}');
    expect(index.exposedTemplate('b', 'b://{x}/raw')).toBe('b://{x}/raw');
  });

  it("keeps an App's ui:// View in the ui scheme when two servers share it", () => {
    const views = new ResourceUriIndex(
      new Map([
        ['a', { resources: [{ uri: 'ui://clock/view.html', name: 'view' }] }],
        ['b', { resources: [{ uri: 'ui://clock/view.html', name: 'view' }] }],
      ]),
    );
    expect(views.exposedUri('b', 'ui://clock/view.html')).toBe('ui://loadout/b/clock/view.html');
    expect(views.resolve('ui://loadout/b/clock/view.html', both)).toEqual({ server: 'b', uri: 'ui://clock/view.html' });
  });

  it('routes listed URIs by the map and unlisted ones by the owning template, within the session servers', () => {
    expect(index.resolve('mem://only-a', both)).toEqual({ server: 'a', uri: 'mem://only-a' });
    expect(index.resolve('loadout://b/file:///shared', both)).toEqual({ server: 'b', uri: 'file:///shared' });
    expect(index.resolve('loadout://b/file:///shared', new Set(['a']))).toBeUndefined();
    expect(index.resolve('loadout://a/doc://42', both)).toEqual({ server: 'a', uri: 'doc://42' });
    expect(index.resolve('b://7/raw', both)).toEqual({ server: 'b', uri: 'b://7/raw' });
    expect(index.resolve('nowhere://x', both)).toBeUndefined();
  });

  it('finds the owner of a client-facing template (for completions)', () => {
    expect(index.resolveTemplate('loadout://a/doc://{id}', both)).toEqual({ server: 'a', uri: 'doc://{id}' });
    expect(index.resolveTemplate('b://{x}/raw', both)).toEqual({ server: 'b', uri: 'b://{x}/raw' });
  });
});
