// The context manager loadout registers with the tracer: AsyncLocalStorage, as the SDK's default,
// entered only for a context that carries a span. On Node 20 entering one once turns on a hook on
// every promise the process makes from then on; the SDK's exporters enter a context with no span
// (tracing suppressed for their own requests, which nothing in loadout traces) on each export, and
// that alone cost every forwarded call its promises' hook. And the hook is turned off again once no
// request a context was entered for is still being answered (a meta-tool call turned it on for good).
// What such a request leaves running after its answer then finds no context, or, while another
// request keeps the hook on, the answered one's: either way what it sends downstream starts a trace
// of its own (sendingContext), never a child of a span that has ended.
import { AsyncLocalStorage } from 'node:async_hooks';
import { createContextKey, ROOT_CONTEXT, trace, type Context, type ContextManager, type Span } from '@opentelemetry/api';

// The SERVER span of the request a context was entered for (its meta-tool's child contexts keep it).
const ENTERED_FOR = createContextKey('loadout request entered for');

/** AsyncLocalStorage, entered only to carry a span (or to leave one). */
export class SpanContextManager implements ContextManager {
  readonly #storage = new AsyncLocalStorage<Context>();
  // The SERVER spans of the requests being answered in an entered context.
  readonly #held = new Set<Span>();
  // Those of the requests answered since: a context entered for one is over.
  readonly #answered = new WeakSet<Span>();

  /**
   * `within` (the context of the request whose SERVER span is `span`), to enter: the request is
   * handled in it until it is answered (release).
   */
  hold(within: Context, span: Span): Context {
    this.#held.add(span);
    return within.setValue(ENTERED_FOR, span);
  }

  /**
   * The request of `span` is answered. With none held, AsyncLocalStorage is turned off (and its hook
   * on every promise) until a context is entered again.
   */
  release(span: Span): void {
    if (!this.#held.delete(span)) return;
    this.#answered.add(span);
    if (this.#held.size === 0) this.#storage.disable();
  }

  /**
   * The context a request loadout sends downstream without one carried by hand starts from: the
   * active one while the request it was entered for is being answered; none (a trace of its own)
   * once that request is answered, whether or not AsyncLocalStorage still holds its context.
   */
  sendingContext(): Context {
    const active = this.active();
    const enteredFor = active.getValue(ENTERED_FOR) as Span | undefined;
    return enteredFor !== undefined && this.#answered.has(enteredFor) ? ROOT_CONTEXT : active;
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
