// The context manager loadout registers with the tracer: AsyncLocalStorage, as the SDK's default,
// entered only for a context that carries a span. On Node 20 entering one once turns on a hook on
// every promise the process makes from then on; the SDK's exporters enter a context with no span
// (tracing suppressed for their own requests, which nothing in loadout traces) on each export, and
// that alone cost every forwarded call its promises' hook. And the hook is turned off again once no
// request a context was entered for is still being answered (a meta-tool call turned it on for good).
import { AsyncLocalStorage } from 'node:async_hooks';
import { ROOT_CONTEXT, trace, type Context, type ContextManager, type Span } from '@opentelemetry/api';

/** AsyncLocalStorage, entered only to carry a span (or to leave one). */
export class SpanContextManager implements ContextManager {
  readonly #storage = new AsyncLocalStorage<Context>();
  // The SERVER spans of the requests being answered in an entered context.
  readonly #held = new Set<Span>();

  /** The request of `span` is handled in an entered context until it is answered (release). */
  hold(span: Span): void {
    this.#held.add(span);
  }

  /**
   * The request of `span` is answered. With none held, AsyncLocalStorage is turned off (and its hook
   * on every promise) until a context is entered again; what still runs of an answered request
   * after that (rare: work it left behind) runs outside its trace.
   */
  release(span: Span): void {
    if (this.#held.delete(span) && this.#held.size === 0) this.#storage.disable();
  }

  active(): Context {
    return this.#storage.getStore() ?? ROOT_CONTEXT;
  }

  with<A extends unknown[], F extends (...args: A) => ReturnType<F>>(
    context: Context,
    fn: F,
    thisArg?: ThisParameterType<F>,
    ...args: A
  ): ReturnType<F> {
    // Nothing to carry and nothing to leave: run it here.
    if (trace.getSpan(context) === undefined && this.#storage.getStore() === undefined) return fn.call(thisArg, ...args);
    return this.#storage.run(context, () => fn.call(thisArg, ...args));
  }

  bind<T>(context: Context, target: T): T {
    if (typeof target !== 'function') return target;
    const bound = target as unknown as (...args: unknown[]) => unknown;
    const within = this.with.bind(this);
    return function (this: unknown, ...args: unknown[]) {
      return within(context, () => bound.apply(this, args));
    } as T;
  }

  enable(): this {
    return this;
  }

  disable(): this {
    this.#storage.disable();
    return this;
  }
}
