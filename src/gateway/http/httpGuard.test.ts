import { describe, expect, it } from 'vitest';
import { isLoadoutError } from '../../shared/index.js';
import { assertSafeBind, createRequestGuard, isLoopbackHost } from './httpGuard.js';

const CHECK_ALL = { needsToken: true, checksHost: true };

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
    for (const host of ['127.0.0.1:7077', 'localhost:7077', '[::1]:7077']) expect(guard({ host }, CHECK_ALL)).toBeUndefined();
    for (const host of ['evil.example:7077', '127.0.0.1:8080', 'localhost', undefined])
      expect(guard({ host }, CHECK_ALL)?.status).toBe(403);
  });

  it('accepts no Origin, its own origin and allowed origins, and refuses others', () => {
    const guard = createRequestGuard({ host: '127.0.0.1', port: 7077, allowedOrigins: ['http://localhost:6274/'] });
    const host = '127.0.0.1:7077';
    expect(guard({ host }, CHECK_ALL)).toBeUndefined();
    expect(guard({ host, origin: 'http://localhost:7077' }, CHECK_ALL)).toBeUndefined();
    expect(guard({ host, origin: 'http://localhost:6274' }, CHECK_ALL)).toBeUndefined();
    for (const origin of ['http://evil.example', 'null', 'http://localhost:7078', 'https://127.0.0.1:7077']) {
      expect(guard({ host, origin }, CHECK_ALL)?.status).toBe(403);
    }
  });

  it('checks the bearer token only where required, and any Host on a wildcard bind', () => {
    const guard = createRequestGuard({ host: '0.0.0.0', port: 7077, tokens: ['secret'] });
    expect(guard({ host: 'box.lan:7077', authorization: 'Bearer secret' }, CHECK_ALL)).toBeUndefined();
    expect(guard({ host: 'box.lan:7077', authorization: 'bearer  secret ' }, CHECK_ALL)).toBeUndefined();
    expect(guard({ host: 'box.lan:7077', authorization: 'Bearer secre' }, CHECK_ALL)?.status).toBe(401);
    expect(guard({ host: 'box.lan:7077', authorization: 'Basic secret' }, CHECK_ALL)?.status).toBe(401);
    expect(guard({ host: 'box.lan:7077' }, CHECK_ALL)?.status).toBe(401);
    expect(guard({ host: 'box.lan:7077' }, { needsToken: false, checksHost: true })).toBeUndefined();
  });

  it("accepts an allowed host's name on any port (NAME:PORT only on that port) besides the bound address, and refuses other names", () => {
    const guard = createRequestGuard({ host: '127.0.0.1', port: 7077, allowedHosts: ['MCP.example.com', 'internal.lan:8443'] });
    for (const host of ['mcp.example.com', 'mcp.example.com:443', 'Mcp.Example.Com:8080', 'internal.lan:8443', '127.0.0.1:7077']) {
      expect(guard({ host }, CHECK_ALL), host).toBeUndefined();
    }
    for (const host of [
      'evil.example',
      'internal.lan',
      'internal.lan:443',
      'mcp.example.com.evil.example',
      'a@mcp.example.com',
      '127.0.0.1',
    ]) {
      expect(guard({ host }, CHECK_ALL)?.status, host).toBe(403);
    }
    expect(guard({ host: 'evil.example' }, { needsToken: true, checksHost: false })).toBeUndefined();
  });

  it('on a wildcard bind with allowed hosts, accepts them, loopback names and any address, and refuses other names', () => {
    const guard = createRequestGuard({ host: '0.0.0.0', port: 7077, allowedHosts: ['mcp.example.com'] });
    for (const host of ['mcp.example.com', '10.1.2.3:7077', '[fd00::5]:7077', 'localhost:7077'])
      expect(guard({ host }, CHECK_ALL), host).toBeUndefined();
    for (const host of ['rebound.example:7077', 'box.lan', undefined]) expect(guard({ host }, CHECK_ALL)?.status, host).toBe(403);
  });
});
