import { describe, expect, it } from 'vitest';
import { createContextKey, ROOT_CONTEXT, trace } from '@opentelemetry/api';
import { SpanContextManager } from './spanContexts.js';

const KEY = createContextKey('test key');
const span = trace.wrapSpanContext({ traceId: '1'.repeat(32), spanId: '2'.repeat(16), traceFlags: 1 });

describe('SpanContextManager', () => {
  it('carries a context with a span across awaits', async () => {
    const manager = new SpanContextManager();
    const traced = trace.setSpan(ROOT_CONTEXT, span);
    const seen = await manager.with(traced, async () => {
      await new Promise((resolve) => setImmediate(resolve));
      return manager.active();
    });
    expect(trace.getSpan(seen)).toBe(span);
    expect(manager.active()).toBe(ROOT_CONTEXT);
  });

  it('runs a function given a context with no span, from no context, without entering it', () => {
    const manager = new SpanContextManager();
    const spanless = ROOT_CONTEXT.setValue(KEY, true);
    expect(manager.with(spanless, (a: number, b: number) => [manager.active(), a + b] as const, undefined, 1, 2)).toEqual([
      ROOT_CONTEXT,
      3,
    ]);
  });

  it('enters a spanless context inside one with a span, so the span is left', () => {
    const manager = new SpanContextManager();
    const spanless = ROOT_CONTEXT.setValue(KEY, true);
    const inner = manager.with(trace.setSpan(ROOT_CONTEXT, span), () => manager.with(spanless, () => manager.active()));
    expect(inner).toBe(spanless);
    expect(trace.getSpan(inner)).toBeUndefined();
  });

  it('binds a function to a context, keeping its this', () => {
    const manager = new SpanContextManager();
    const traced = trace.setSpan(ROOT_CONTEXT, span);
    function read(this: { name: string }) {
      return [this.name, trace.getSpan(manager.active())] as const;
    }
    const target = { name: 'target', read: manager.bind(traced, read) };
    expect(target.read()).toEqual(['target', span]);
  });

  it('turns AsyncLocalStorage off once the last request held in an entered context is answered, and on again for the next', async () => {
    const manager = new SpanContextManager();
    const traced = trace.setSpan(ROOT_CONTEXT, span);
    const other = trace.wrapSpanContext({ traceId: '3'.repeat(32), spanId: '4'.repeat(16), traceFlags: 1 });
    manager.hold(traced, span);
    manager.hold(ROOT_CONTEXT, other);
    const seen = await manager.with(traced, async () => {
      await new Promise((resolve) => setImmediate(resolve));
      manager.release(span);
      // Another request is still held: the context is kept.
      const whileHeld = manager.active();
      manager.release(other);
      await new Promise((resolve) => setImmediate(resolve));
      return [whileHeld, manager.active()];
    });
    expect(seen).toEqual([traced, ROOT_CONTEXT]);
    expect(manager.with(traced, () => manager.active())).toBe(traced);
  });

  it('sends in the entered context while its request is answered, and in none once it is, though another request keeps AsyncLocalStorage on', async () => {
    const manager = new SpanContextManager();
    const other = trace.wrapSpanContext({ traceId: '3'.repeat(32), spanId: '4'.repeat(16), traceFlags: 1 });
    const entered = manager.hold(trace.setSpan(ROOT_CONTEXT, span), span);
    const otherEntered = manager.hold(trace.setSpan(ROOT_CONTEXT, other), other);
    // A meta-tool's child span inside the request's context: the request is still what counts.
    const child = trace.setSpan(entered, trace.wrapSpanContext({ traceId: '1'.repeat(32), spanId: '5'.repeat(16), traceFlags: 1 }));
    const [whileAnswering, leftBehind] = await manager.with(child, async () => {
      const sending = manager.sendingContext();
      manager.release(span);
      await new Promise((resolve) => setImmediate(resolve));
      // Still the active context (the other request is held), but no longer where a request is sent from.
      expect(manager.active()).toBe(child);
      return [sending, manager.sendingContext()];
    });
    expect(whileAnswering).toBe(child);
    expect(leftBehind).toBe(ROOT_CONTEXT);
    expect(manager.with(otherEntered, () => manager.sendingContext())).toBe(otherEntered);
    manager.release(other);
  });
});
