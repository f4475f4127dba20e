import { describe, expect, it } from 'vitest';
import { ServersFileSchema } from './schema.js';
import { sandboxOf } from './sandboxSettings.js';

const defaults = { filesystem: { deny_read: [], write: [] }, network: {} };

describe('sandbox settings', () => {
  it('reads sandbox: true as the defaults, and a policy with its own lists', () => {
    const file = ServersFileSchema.parse({
      servers: {
        plain: { command: 'x' },
        boxed: { command: 'x', sandbox: true },
        notes: { command: 'x', sandbox: { filesystem: { write: ['~/notes'] }, network: { allow: ['api.acme.com', '*.acme.com:443'] } } },
      },
    });
    expect(sandboxOf(file.servers.plain!)).toBeUndefined();
    expect(sandboxOf(file.servers.boxed!)).toEqual(defaults);
    expect(sandboxOf(file.servers.notes!)).toEqual({
      filesystem: { deny_read: [], write: ['~/notes'] },
      network: { allow: ['api.acme.com', '*.acme.com:443'] },
    });
  });

  it('gives every stdio server the defaults under gateway.sandbox: true, except one with sandbox: false, and no HTTP server', () => {
    const file = ServersFileSchema.parse({
      gateway: { sandbox: true },
      servers: { boxed: { command: 'x' }, exempt: { command: 'x', sandbox: false }, remote: { url: 'http://127.0.0.1:1/mcp' } },
    });
    expect(sandboxOf(file.servers.boxed!)).toEqual(defaults);
    expect(sandboxOf(file.servers.exempt!)).toBeUndefined();
    expect(sandboxOf(file.servers.remote!)).toBeUndefined();
  });

  it('refuses a host written as a URL, a typo in the entry, and sandbox: on an HTTP server', () => {
    const parse = (server: Record<string, unknown>) => ServersFileSchema.safeParse({ servers: { s: server } });
    expect(parse({ command: 'x', sandbox: { network: { allow: ['https://api.acme.com/'] } } }).error?.issues[0]?.message).toContain(
      'without scheme or path',
    );
    expect(parse({ command: 'x', sandbox: { filesystem: { deny_reads: [] } } }).error?.issues[0]?.message).toContain(
      "did you mean 'deny_read'",
    );
    expect(parse({ url: 'http://127.0.0.1:1/mcp', sandbox: true }).success).toBe(false);
  });
});
