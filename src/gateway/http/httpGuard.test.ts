import { describe, expect, it } from 'vitest';
import { isLoadoutError } from '../../shared/index.js';
import { assertSafeBind, createRequestGuard, isLoopbackHost } from './httpGuard.js';

describe('httpGuard', () => {
  it('knows loopback hosts', () => {
    for (const host of ['127.0.0.1', '127.1.2.3', 'localhost', '::1', '[::1]']) expect(isLoopbackHost(host)).toBe(true);
    for (const host of ['0.0.0.0', '::', '192.168.1.4', 'example.com']) expect(isLoopbackHost(host)).toBe(false);
  });

  it('refuses a non-loopback bind without a token', () => {
    expect(() => assertSafeBind('127.0.0.1', undefined)).not.toThrow();
    expect(() => assertSafeBind('0.0.0.0', 'token')).not.toThrow();
    let thrown: unknown;
    try {
      assertSafeBind('0.0.0.0', undefined);
    } catch (error) {
      thrown = error;
    }
    expect(isLoadoutError(thrown, 'INVALID_ARGUMENT')).toBe(true);
  });

  it('accepts loopback names on the bound port and refuses other hosts and ports', () => {
    const guard = createRequestGuard({ host: '127.0.0.1', port: 7077 });
    for (const host of ['127.0.0.1:7077', 'localhost:7077', '[::1]:7077']) expect(guard({ host }, true)).toBeUndefined();
    for (const host of ['evil.example:7077', '127.0.0.1:8080', 'localhost', undefined]) expect(guard({ host }, true)?.status).toBe(403);
  });

  it('accepts no Origin, its own origin and allowed origins, and refuses others', () => {
    const guard = createRequestGuard({ host: '127.0.0.1', port: 7077, allowedOrigins: ['http://localhost:6274/'] });
    const host = '127.0.0.1:7077';
    expect(guard({ host }, true)).toBeUndefined();
    expect(guard({ host, origin: 'http://localhost:7077' }, true)).toBeUndefined();
    expect(guard({ host, origin: 'http://localhost:6274' }, true)).toBeUndefined();
    for (const origin of ['http://evil.example', 'null', 'http://localhost:7078', 'https://127.0.0.1:7077']) {
      expect(guard({ host, origin }, true)?.status).toBe(403);
    }
  });

  it('checks the bearer token only where required, and any Host on a wildcard bind', () => {
    const guard = createRequestGuard({ host: '0.0.0.0', port: 7077, tokens: ['secret'] });
    expect(guard({ host: 'box.lan:7077', authorization: 'Bearer secret' }, true)).toBeUndefined();
    expect(guard({ host: 'box.lan:7077', authorization: 'bearer  secret ' }, true)).toBeUndefined();
    expect(guard({ host: 'box.lan:7077', authorization: 'Bearer secre' }, true)?.status).toBe(401);
    expect(guard({ host: 'box.lan:7077', authorization: 'Basic secret' }, true)?.status).toBe(401);
    expect(guard({ host: 'box.lan:7077' }, true)?.status).toBe(401);
    expect(guard({ host: 'box.lan:7077' }, false)).toBeUndefined();
  });
});
