// The one place that decides how a session's tools/call goes, whichever way it came in: the
// session's intake (clientIntake.ts, and through it the 2026-07-28 fast paths of modernCallPath.ts
// and modernHttp.ts), the SDK Server's tools/call handler, and the call-tool meta-tool. A call is
// a meta-tool run here, a route forwarded downstream (plain or task-augmented), or a refusal the
// agent can act on; a forwarded call of a tool the last search showed is credited to search
// learning, and a tool that changed upstream is refused when changed tools are blocked. The
// state-changing meta-tools run in arrival order, and every other call waits for those before it.
// Each call is counted against its principal's rate limits and recorded in the audit trail once
// answered (callAudit.ts). A name no exposed tool has may be an open App's View calling its
// server's tool by the server's own name (openApps.ts): routed there, and audited as from the App.
import type { CallToolRequest, CallToolResult, RequestId } from '@modelcontextprotocol/server';
import type { LimitRefusal } from '../../identity/index.js';
import { APP_ONLY_REASON, isAppOnly, uiResourceUriOf, unusableReason, type CatalogTool } from '../../catalog/index.js';
import { resolveCatalogName, routeTo, type Route } from '../../registry/index.js';
import { LoadoutError, errorMessage, isLoadoutError, remedyText, type LoadoutRemedy } from '../../shared/index.js';
import { auditCall, auditedAnswer, isRateLimitError, metaToolAction, rateLimitError } from './callAudit.js';
import { changedToolRefusal } from './changedToolGuard.js';
import type { DirectAnswer } from './clientIntake.js';
import type { GatewayContext } from '../context.js';
import { clientRequestOf, forwardToolCall, isProtocolRefusal, type ClientRequest, type RequestExtra } from './forward.js';
import { OPTIMIZATION_META_TOOLS } from '../metaTools/index.js';
import { describeInvalidArguments, parseMetaToolArguments, type MetaTool, type MetaToolSession } from '../metaTools/index.js';
import { creditCall, creditSearch } from '../metaTools/index.js';
import { withFileNotice } from '../metaTools/index.js';
import { unroutedToolMessage, unknownToolError } from '../metaTools/index.js';
import { spellForClient } from '../clientSpelling.js';
import type { HubMember } from '../sessionHub.js';
import type { OpenApps } from '../openApps.js';
import { forwardTaskCall } from './taskHandlers.js';
import { errorResult, textResult } from '../toolResults.js';
import { authorizeUnlisted, withUserAuthorization } from './userAuthorization.js';

const OPTIMIZATION_TOOL_NAMES: ReadonlySet<string> = new Set(OPTIMIZATION_META_TOOLS.map((tool) => tool.name));
const CALL_TOOL = 'call-tool';

// Next steps the lower layers ask for, in the agent's terms: its meta-tools.
const AGENT_REMEDIES: Readonly<Record<LoadoutRemedy, string>> = { 'create-toolset': 'create one with build-toolset' };

/** What the router needs of its session: the set it routes by, and who owns its tasks. */
export interface RoutedSession extends MetaToolSession {
  /** The session as the hub sees it: the owner of the tasks its calls create. */
  readonly member: HubMember;
  /** The Apps the session has open: a call of a UI tool opens its server's. */
  readonly openApps: OpenApps;
}

/** The tool a call names, for its audit record: the name it was called by and, once known, the server's tool. */
interface CalledTool {
  readonly exposedTool: string;
  readonly server?: string;
  readonly tool?: string;
}

/** A tools/call's params, as every way in hands them over. */
type CallParams = Pick<CallToolRequest['params'], 'name' | 'arguments' | 'task'>;

/** How one call of `name` goes (see CallRouter.decide). */
export type CallDecision =
  | { readonly kind: 'meta-tool'; readonly tool: MetaTool }
  | { readonly kind: 'forward'; readonly route: Route }
  | { readonly kind: 'refuse' };

/** Options of a CallRouter. */
export interface CallRouterOptions {
  readonly context: GatewayContext;
  /** The meta-tools the session serves, by name. */
  readonly metaTools: ReadonlyMap<string, MetaTool>;
  readonly session: RoutedSession;
  /** The client's name (initialize's clientInfo): how its model spells loadout's tool names (clientSpelling.ts). */
  readonly clientName: () => string | undefined;
}

/** The per-session router of tool calls. */
export class CallRouter {
  readonly #context: GatewayContext;
  readonly #metaTools: ReadonlyMap<string, MetaTool>;
  readonly #session: RoutedSession;
  readonly #clientName: () => string | undefined;
  // The state-changing meta-tools in order of arrival (see MetaTool.changesState): each runs when the one before has finished.
  #changes: Promise<void> = Promise.resolve();
  #changesPending = 0;
  /** call-tool calls counted already against the server their tool was found on when decided (see #decideCall). */
  readonly #countedOn = new WeakMap<RequestExtra, string>();

  constructor(options: CallRouterOptions) {
    this.#context = options.context;
    this.#metaTools = options.metaTools;
    this.#session = options.session;
    this.#clientName = options.clientName;
  }

  /** How a call of `name` goes, against the exposed set `routes`: a meta-tool's name is never a route. */
  decide(name: string, routes: ReadonlyMap<string, Route>): CallDecision {
    const tool = this.#metaTools.get(name);
    if (tool) return { kind: 'meta-tool', tool };
    const route = routes.get(name);
    return route ? { kind: 'forward', route } : { kind: 'refuse' };
  }

  /**
   * The intake's question (synchronous: it is on every forwarded call's path): how to answer this
   * request straight from the transport, or undefined to let the Server take it. Only a call of an
   * equipped tool is answered there, and only while no state change that arrived before it is
   * pending (the Server's call then waits for it).
   */
  direct(method: string, params: Record<string, unknown> | undefined): DirectAnswer | undefined {
    if (method !== 'tools/call' || this.#changesPending > 0) return undefined;
    const call = params as unknown as CallParams;
    const decision = this.decide(call.name, this.#session.snapshot.routes);
    if (decision.kind !== 'forward') return undefined;
    const { route } = decision;
    const limits = this.#context.limits;
    if (!limits.enabled) {
      creditCall(this.#context, this.#session.searcher, route.id);
      return (request) => this.#forward(route, call, request);
    }
    // Counted when answered: in the store, counting is a statement to wait for.
    return async (request) => {
      const refusal = await limits.take(this.#context.principal.id, route.server);
      if (refusal)
        throw this.#rateLimited(
          refusal,
          { exposedTool: call.name, server: route.server, tool: route.tool },
          call.arguments,
          request.requestId,
        );
      creditCall(this.#context, this.#session.searcher, route.id);
      return this.#forward(route, call, request);
    };
  }

  /**
   * The refusal a call would get now for a rate limit, counting nothing, for a way in that answers
   * it before the call reaches the router (HTTP's 429): the limits of its principal and of the
   * server of the tool it names (or call-tool calls), as the router would count them. Recorded in
   * the audit trail as the call's refusal: the caller answers it, and the call is not routed.
   */
  async limitRefusal(params: CallParams, requestId: RequestId): Promise<Error | undefined> {
    // Asked of every HTTP call: nothing to look up when no limit is set.
    if (!this.#context.limits.enabled) return undefined;
    const server = this.#serverOf(params);
    const refusal = await this.#context.limits.peek(this.#context.principal.id, server);
    return refusal && this.#rateLimited(refusal, this.#calledTool(params.name, server), params.arguments, requestId);
  }

  // The server a call of `params` reaches, as far as the current set and catalog say without waiting.
  #serverOf(params: CallParams): string | undefined {
    const decision = this.decide(params.name, this.#session.snapshot.routes);
    if (decision.kind === 'forward') return decision.route.server;
    const target = params.name === CALL_TOOL ? params.arguments?.tool : undefined;
    if (typeof target !== 'string') return undefined;
    const gateway = this.#context;
    return this.#session.snapshot.routes.get(target)?.server ?? resolveCatalogName(gateway.catalog.current, target, gateway.naming)?.server;
  }

  /** The SDK Server's tools/call handler: whatever reaches the Server (a meta-tool, a call before the set settled, a refusal). */
  async call(params: CallParams, extra: RequestExtra): Promise<CallToolResult> {
    const metaTool = this.#metaTools.get(params.name);
    // Called in arrival order (the SDK runs handlers in the order requests came), so the queue keeps
    // it: queued before any wait (a limit counted in the store is one), so that a call arriving
    // after it is not answered directly before it (see direct).
    if (metaTool?.changesState)
      return this.#inArrivalOrder(async () => {
        await this.#countCall(params, extra, undefined);
        return this.#runMetaTool(metaTool, params.arguments, extra);
      });
    // Behind changes that came first, the call is decided in their queue: after them, and before
    // any change that comes after it, whatever its own waits (a limit counted in the store is one).
    const decision =
      this.#changesPending > 0 ? await this.#inArrivalOrder(() => this.#decideCall(params, extra)) : await this.#decideCall(params, extra);
    if (decision.kind === 'meta-tool') return this.#runMetaTool(decision.tool, params.arguments, extra);
    if (decision.kind === 'forward') {
      creditCall(this.#context, this.#session.searcher, decision.route.id);
      return this.#forward(decision.route, params, this.#request(extra)) as Promise<CallToolResult>;
    }
    // Routed nowhere by the exposed set: a View's call by its server's own name, when an App of it is open.
    let appRefusal: string | undefined;
    try {
      const app = this.#session.openApps.resolve(this.#context.catalog.current, params.name);
      if (app) return this.#callFromApp(app.tool, params, extra);
    } catch (error) {
      if (!isLoadoutError(error)) throw error;
      appRefusal = error.message;
    }
    // Routed nowhere: the name it was called by is all there is to record.
    const record = auditCall(this.#context, {
      action: 'tool-call',
      exposedTool: params.name,
      arguments: params.arguments,
      requestId: extra.mcpReq.id,
      ...(appRefusal === undefined ? {} : { via: 'app' as const }),
    });
    if (appRefusal !== undefined) {
      record?.('error', appRefusal);
      return errorResult(appRefusal);
    }
    if (OPTIMIZATION_TOOL_NAMES.has(params.name)) {
      record?.('error', 'optimization tools are off');
      return errorResult(
        `${params.name} is an optimization tool, and those are off: set optimization.expose_tools: true in servers.yaml and restart loadout, or use \`loadout optimize\`.`,
      );
    }
    const message = await unroutedToolMessage(this.#context, params.name);
    // Refused alike whether policy hides it or it does not exist; only the record tells them apart.
    record?.(this.#context.hiddenByPolicy(params.name) ? 'denied-policy' : 'error', message);
    return errorResult(message);
  }

  /**
   * The call-tool meta-tool: any enabled catalog tool, by an equipped name, a server.tool id or a
   * flattened name. Throws a LoadoutError (an isError result for the agent) for one it cannot call.
   */
  callAny(tool: string, args: Record<string, unknown> | undefined, extra: RequestExtra): Promise<CallToolResult> {
    return this.#callAny(tool, args, extra, this.#request(extra));
  }

  // callAny, made as `request` (a call asked for an authorization is made on the request that answered it).
  async #callAny(
    tool: string,
    args: Record<string, unknown> | undefined,
    extra: RequestExtra,
    request: ClientRequest,
  ): Promise<CallToolResult> {
    const equipped = (await this.#session.settledSnapshot()).routes.get(tool);
    // An App's own tool equipped with its UI tool is still its View's, never the model's: refused below.
    if (equipped && !this.#isAppOnly(equipped.id)) {
      const limited = await this.#countOn(equipped.server, extra);
      if (limited)
        throw this.#rateLimited(limited, { exposedTool: tool, server: equipped.server, tool: equipped.tool }, args, extra.mcpReq.id);
      creditCall(this.#context, this.#session.searcher, equipped.id);
      return this.#forward(equipped, { name: tool, arguments: args }, request) as Promise<CallToolResult>;
    }
    const gateway = this.#context;
    await gateway.ready();
    let catalog = gateway.catalog.current;
    let found = resolveCatalogName(catalog, tool, gateway.naming);
    if (!found) {
      // The tool may belong to a server the user has just logged in to.
      await gateway.discovery.retryAuthorized();
      catalog = gateway.catalog.current;
      found = resolveCatalogName(catalog, tool, gateway.naming);
    }
    const refused = (error: LoadoutError): LoadoutError => {
      const named = found ? { server: found.server, tool: found.name } : {};
      const record = auditCall(gateway, { action: 'tool-call', ...named, exposedTool: tool, arguments: args, requestId: extra.mcpReq.id });
      record?.(gateway.hiddenByPolicy(tool) ? 'denied-policy' : 'error', error.message);
      return error;
    };
    if (!found) {
      const unlisted = await authorizeUnlisted(gateway, tool, request, (made) => this.#callAny(tool, args, extra, made));
      if (unlisted) return unlisted;
      throw refused(unknownToolError(gateway, catalog, tool));
    }
    if (!found.enabled) throw refused(new LoadoutError('TOOL_DISABLED', `${found.id} is ${unusableReason(found)}; it cannot be called.`));
    if (isAppOnly(found.definition))
      throw refused(new LoadoutError('TOOL_NOT_FOUND', `${found.id} is ${APP_ONLY_REASON}, and only its View calls it.`));
    const limited = await this.#countOn(found.server, extra);
    if (limited) throw this.#rateLimited(limited, { exposedTool: tool, server: found.server, tool: found.name }, args, extra.mcpReq.id);
    // A tool outside the equipped set, found by a search: its words are learned whatever that search showed.
    void creditSearch(gateway, this.#session.searcher, [found.id]);
    return this.#forward(routeTo(found), { name: tool, arguments: args }, request) as Promise<CallToolResult>;
  }

  // The exposed set to route `name` by: the current one when it routes it (no wait on the call
  // path), else the one start-up discovery settles.
  async #routes(name: string): Promise<{ routes: ReadonlyMap<string, Route> }> {
    const { snapshot } = this.#session;
    return snapshot.routes.has(name) ? snapshot : this.#session.settledSnapshot();
  }

  // A View's call of `tool` (openApps.ts), counted against its server's limit as any call of it is.
  async #callFromApp(tool: CatalogTool, params: CallParams, extra: RequestExtra): Promise<CallToolResult> {
    const limited = await this.#countOn(tool.server, extra);
    if (limited)
      throw this.#rateLimited(
        limited,
        { exposedTool: params.name, server: tool.server, tool: tool.name },
        params.arguments,
        extra.mcpReq.id,
      );
    const route: Route = { server: tool.server, tool: tool.name, id: tool.id };
    return this.#forward(route, params, this.#request(extra), 'app') as Promise<CallToolResult>;
  }

  #isAppOnly(id: string): boolean {
    const tool = this.#context.catalog.current.get(id);
    return tool !== undefined && isAppOnly(tool.definition);
  }

  #request(extra: RequestExtra): ClientRequest {
    return clientRequestOf(extra, this.#session.server, this.#context);
  }

  // Forward a call of `route`, unless changed tools are blocked and this one changed upstream (no
  // await on the call path when blocking is off). A task-augmented call answers with its task. A
  // call of a UI tool opens its server's App (openApps.ts); `via` says a View made the call.
  #forward(route: Route, params: CallParams, request: ClientRequest, via?: 'app'): Promise<Record<string, unknown>> {
    const definition = this.#context.catalog.current.get(route.id)?.definition;
    if (definition && uiResourceUriOf(definition) !== undefined) this.#session.openApps.open(route.server);
    const record = auditCall(this.#context, {
      action: 'tool-call',
      server: route.server,
      tool: route.tool,
      exposedTool: params.name,
      ...(via === undefined ? {} : { via }),
      arguments: params.arguments,
      requestId: request.requestId,
    });
    const forward = (made: ClientRequest): Promise<Record<string, unknown>> =>
      params.task === undefined
        ? forwardToolCall(this.#context.pool, route, params.arguments, made)
        : forwardTaskCall(this.#context, this.#session.member, route, params, made);
    // Only a per-user server's call can need its caller's own sign-in: the others, on every
    // forwarded call's path, go without the wrapper.
    const send = (): Promise<Record<string, unknown>> =>
      this.#context.pool.config(route.server)?.credentials === 'per-user'
        ? withUserAuthorization(this.#context, request, route.id, forward)
        : forward(request);
    if (!this.#context.settings.block_changed_tools) return auditedAnswer(send(), record);
    return auditedAnswer((async () => (await changedToolRefusal(this.#context, route)) ?? send())(), record);
  }

  // The error of a call over a rate limit, recorded as refused.
  #rateLimited(refusal: LimitRefusal, called: CalledTool, args: unknown, requestId: RequestId): Error {
    const error = rateLimitError(refusal);
    this.#context.telemetry.rateLimited(refusal.limit);
    const action = this.#metaTools.has(called.exposedTool) ? metaToolAction(called.exposedTool) : 'tool-call';
    auditCall(this.#context, { action, ...called, arguments: args, requestId })?.('rate-limited', error.message);
    return error;
  }

  // What a call of `name` reaches, for its record, as far as the current set and catalog say without
  // waiting: a meta-tool, an equipped tool, a catalog tool of `server`, or only the name it was called by.
  #calledTool(name: string, server: string | undefined): CalledTool {
    if (server === undefined) return this.#metaTools.has(name) ? { exposedTool: name, tool: name } : { exposedTool: name };
    const gateway = this.#context;
    const equipped = this.#session.snapshot.routes.get(name);
    const found = equipped
      ? { server: equipped.server, name: equipped.tool }
      : resolveCatalogName(gateway.catalog.current, name, gateway.naming);
    return found?.server === server ? { exposedTool: name, server, tool: found.name } : { exposedTool: name, server };
  }

  // Counts a call against its principal's limit and, when it reaches `server`, that server's, in
  // one take (in the store, one statement), and refuses it over either: a call its server's limit
  // refuses spends nothing of its principal's, as direct()'s does not.
  async #countCall(params: CallParams, extra: RequestExtra, server: string | undefined): Promise<void> {
    if (!this.#context.limits.enabled) return;
    const limited = await this.#context.limits.take(this.#context.principal.id, server);
    if (limited) throw this.#rateLimited(limited, this.#calledTool(params.name, server), params.arguments, extra.mcpReq.id);
  }

  // The route is decided before the call is counted, so that it is counted once, where it goes: a
  // call-tool call on the server its tool is found on now (callAny counts no more when it reaches it).
  async #decideCall(params: CallParams, extra: RequestExtra): Promise<CallDecision> {
    const decision = this.decide(params.name, (await this.#routes(params.name)).routes);
    if (decision.kind !== 'meta-tool' || decision.tool.name !== CALL_TOOL) {
      await this.#countCall(params, extra, decision.kind === 'forward' ? decision.route.server : undefined);
      return decision;
    }
    const server = this.#serverOf(params);
    // Refused for its server's limit, it is recorded as the call it would make, as callAny records it.
    const { tool, arguments: args } = params.arguments ?? {};
    await this.#countCall(
      server === undefined ? params : { name: String(tool), arguments: args as CallParams['arguments'] },
      extra,
      server,
    );
    if (server !== undefined) this.#countedOn.set(extra, server);
    return decision;
  }

  // Count a call-tool call of a tool of `server`, counted already against its principal's limit
  // (and against `server`'s, when it was found there when decided).
  #countOn(server: string, extra: RequestExtra): Promise<LimitRefusal | undefined> | undefined {
    if (this.#countedOn.get(extra) === server) return undefined;
    return this.#context.limits.take(this.#context.principal.id, server, { counted: true });
  }

  // Runs `run` after every state change queued before it; counted as pending (see direct) until it is done.
  #inArrivalOrder<T>(run: () => Promise<T>): Promise<T> {
    this.#changesPending++;
    const result = this.#changes.then(run);
    const done = (): void => {
      this.#changesPending--;
    };
    this.#changes = result.then(done, done);
    return result;
  }

  async #runMetaTool(tool: MetaTool, args: Record<string, unknown> | undefined, extra: RequestExtra): Promise<CallToolResult> {
    // loadout's own words, never a downstream tool's answer, name the meta-tools as the client's model sees them.
    const spelt = (text: string): string => spellForClient(text, this.#clientName(), this.#metaTools.keys());
    // call-tool is recorded as the call it makes, or as that call's refusal (callAny).
    const record =
      tool.name === CALL_TOOL
        ? undefined
        : auditCall(this.#context, {
            action: metaToolAction(tool.name),
            tool: tool.name,
            exposedTool: tool.name,
            arguments: args,
            requestId: extra.mcpReq.id,
          });
    const answer = this.#runParsed(tool, args, extra, spelt).then((result) => withFileNotice(result, this.#context.catalog));
    return auditedAnswer(answer, record);
  }

  async #runParsed(
    tool: MetaTool,
    args: Record<string, unknown> | undefined,
    extra: RequestExtra,
    spelt: (text: string) => string,
  ): Promise<CallToolResult> {
    const given = args ?? {};
    const parsed = parseMetaToolArguments(tool, given);
    if (!parsed.success) return errorResult(spelt(describeInvalidArguments(tool, parsed.error, given)));
    try {
      const result = await this.#context.telemetry.metaTool(tool.name, () =>
        tool.run(parsed.data, { gateway: this.#context, session: this.#session, extra }),
      );
      return typeof result === 'string' ? textResult(spelt(result)) : result;
    } catch (error) {
      if (isProtocolRefusal(error) || isRateLimitError(error)) throw error;
      if (isLoadoutError(error)) return errorResult(spelt(remedyText(error, AGENT_REMEDIES)));
      this.#context.logger.error({ mod: 'gateway', tool: tool.name, err: errorMessage(error) }, 'meta-tool failed');
      return errorResult(`${tool.name} failed unexpectedly: ${errorMessage(error)}`);
    }
  }
}
