// The client-facing handlers for everything but tools: prompts, resources (list, templates,
// read, subscribe), completions and logging. Each routes by the session's snapshot (prompt
// names) or the resource maps (URIs), rewrites only the name or URI, and sends the request on
// through forward() (progress, cancellation, relays and failures handled there, as for tools),
// returning the owning server's answer unchanged.
import { ProtocolError, ProtocolErrorCode } from '@modelcontextprotocol/server';
import type {
  CompleteResult,
  GetPromptResult,
  RequestId,
  ReadResourceResult,
  Resource,
  ResourceTemplateType,
  Server,
  ServerCapabilities,
} from '@modelcontextprotocol/server';
import { isUiUri, type Catalog, type ResourceTarget } from '../../catalog/index.js';
import { errorMessage } from '../../shared/index.js';
import { flattenToolName, type RegistrySnapshot } from '../../registry/index.js';
import type { GatewayContext } from '../context.js';
import { clientRequestOf, forward, type RequestExtra } from '../calls/index.js';
import type { ResourceUpdates } from '../stdio/index.js';
import { listResourcePage, type ResourceListKind } from '../resourcePages.js';
import type { HubMember } from '../sessionHub.js';
import type { OpenApps } from '../openApps.js';

/** What loadout declares beside tools. */
export const CONTENT_CAPABILITIES: ServerCapabilities = {
  prompts: { listChanged: true },
  resources: { subscribe: true, listChanged: true },
  completions: {},
  logging: {},
};

/**
 * The JSON-RPC error code for an unknown resource URI: -32602 (Invalid params), which 2026-07-28
 * gives it and the v2 SDK sends in every era (it rewrites 2025-11-25's -32002 when encoding).
 */
export const RESOURCE_NOT_FOUND = ProtocolErrorCode.InvalidParams;

/** What the handlers read from their session. */
export interface ContentSession {
  /** The session's exposed set once start-up discovery has settled. */
  settledSnapshot(): Promise<RegistrySnapshot>;
  readonly member: HubMember;
  /** The session's open Apps: reading a `ui://` resource opens its server's. */
  readonly openApps: OpenApps;
}

/** Register the prompt, resource, completion and logging handlers of one session. */
export function serveContent(server: Server, context: GatewayContext, session: ContentSession): void {
  const { hub } = context;
  // `label` names the request in failures, e.g. "prompts/get of a_simple_prompt".
  // The owning server's answer is passed on unchanged, so it is typed as the result the method expects.
  const send = <Result = Record<string, unknown>>(
    target: string,
    method: string,
    params: Record<string, unknown>,
    label: string,
    extra: RequestExtra,
  ) =>
    forward(
      context.pool,
      { server: target, method, params, label: `${method} of ${label}` },
      clientRequestOf(extra, server, context),
    ) as Promise<Result>;

  server.setRequestHandler('prompts/list', async () => ({ prompts: [...(await session.settledSnapshot()).prompts] }));

  server.setRequestHandler('prompts/get', async (message, ctx) => {
    const route = await promptRoute(context, session, message.params.name, { method: 'prompts/get', requestId: ctx.mcpReq.id });
    return send<GetPromptResult>(route.server, 'prompts/get', { ...message.params, name: route.prompt }, message.params.name, ctx);
  });

  const listPage = async (kind: ResourceListKind, cursor: string | undefined, extra: RequestExtra) => {
    const snapshot = await session.settledSnapshot();
    const sources = {
      catalog: context.catalog.current,
      isConnected: (name: string) => context.pool.isConnected(name),
      request: (name: string, method: string, params: Record<string, unknown>) => send(name, method, params, `server '${name}'`, extra),
      routes: context.resourceRoutes,
      logger: context.logger,
    };
    return listResourcePage(kind, snapshot.servers, cursor, sources);
  };
  server.setRequestHandler('resources/list', async (message, ctx) => {
    const page = await listPage('resources', message.params?.cursor, ctx);
    return { resources: page.items as Resource[], ...(page.nextCursor ? { nextCursor: page.nextCursor } : {}) };
  });
  server.setRequestHandler('resources/templates/list', async (message, ctx) => {
    const page = await listPage('resourceTemplates', message.params?.cursor, ctx);
    return { resourceTemplates: page.items as ResourceTemplateType[], ...(page.nextCursor ? { nextCursor: page.nextCursor } : {}) };
  });

  server.setRequestHandler('resources/read', async (message, ctx) => {
    const exposed = message.params.uri;
    const target = await resourceTarget(context, session, exposed, { method: 'resources/read', requestId: ctx.mcpReq.id });
    const result = await send<ReadResourceResult>(target.server, 'resources/read', { ...message.params, uri: target.uri }, exposed, ctx);
    if (isUiUri(target.uri)) session.openApps.open(target.server);
    return exposed === target.uri ? result : withExposedUri(result, target.uri, exposed);
  });

  server.setRequestHandler('resources/subscribe', async (message, ctx) => {
    const target = await resourceTarget(context, session, message.params.uri, {
      method: 'resources/subscribe',
      requestId: ctx.mcpReq.id,
    });
    await hub.subscribe(session.member, target, message.params.uri, () =>
      send(target.server, 'resources/subscribe', { ...message.params, uri: target.uri }, message.params.uri, ctx),
    );
    return {};
  });
  server.setRequestHandler('resources/unsubscribe', async (message) => {
    await unsubscribe(context, session, message.params.uri);
    return {};
  });

  server.setRequestHandler('completion/complete', async (message, ctx) => {
    const { ref } = message.params;
    const request = { method: 'completion/complete', requestId: ctx.mcpReq.id };
    if (ref.type === 'ref/prompt') {
      const route = await promptRoute(context, session, ref.name, request);
      return send<CompleteResult>(
        route.server,
        'completion/complete',
        { ...message.params, ref: { ...ref, name: route.prompt } },
        ref.name,
        ctx,
      );
    }
    const snapshot = await session.settledSnapshot();
    const target =
      context.catalog.current.resourceUris.resolveTemplate(ref.uri, snapshot.servers) ??
      (await resourceTarget(context, session, ref.uri, request));
    return send<CompleteResult>(
      target.server,
      'completion/complete',
      { ...message.params, ref: { ...ref, uri: target.uri } },
      ref.uri,
      ctx,
    );
  });

  server.setRequestHandler('logging/setLevel', async (message) => {
    await hub.setLevel(session.member, message.params.level);
    return {};
  });
}

/**
 * The resource updates a 2026-07-28 session's listen streams name (listenSubscriptions.ts): held
 * and released as resources/subscribe and resources/unsubscribe do, one after another (a release
 * never overtakes the hold before it). Nobody waits on them, so a failure is logged.
 */
export function listenedResources(context: GatewayContext, session: ContentSession): ResourceUpdates {
  const { hub, pool, logger } = context;
  let queue = Promise.resolve();
  const inTurn = (uri: string, run: () => Promise<void>): Promise<void> => {
    queue = queue.then(run).catch((error: unknown) => {
      logger.warn({ mod: 'gateway', uri, err: errorMessage(error) }, 'could not change a subscription a listen stream asked for');
    });
    return queue;
  };
  return {
    hold: (uri) =>
      inTurn(uri, async () => {
        const target = await resourceTarget(context, session, uri);
        await hub.subscribe(session.member, target, uri, () => pool.request(target.server, 'resources/subscribe', { uri: target.uri }));
      }),
    release: (uri) => void inTurn(uri, () => unsubscribe(context, session, uri)),
  };
}

// A subscription a revocation ended (revocation.ts) is already gone, and its URI may resolve no
// more: letting go of it succeeds with nothing left to do.
async function unsubscribe(context: GatewayContext, session: ContentSession, uri: string): Promise<void> {
  if (context.hub.forgetEnded(session.member, uri)) return;
  await context.hub.unsubscribe(session.member, await resourceTarget(context, session, uri));
}

// The names a session exposes each catalog prompt under when no other prompt's name collides with
// it (a collision adds a hash a session may or may not need), worked out once per catalog.
const promptNames = new WeakMap<Catalog, ReadonlySet<string>>();

/** Whether `name` is one a catalog prompt is exposed under (a client may ask for any name at all). */
export function isExposedPromptName(catalog: Catalog, name: string, maxNameLength: number): boolean {
  let names = promptNames.get(catalog);
  if (!names) {
    const flattened = new Set<string>();
    for (const server of catalog.servers())
      for (const prompt of catalog.definitionsOf(server)?.prompts ?? [])
        flattened.add(flattenToolName(`${server}.${prompt.name}`, maxNameLength));
    promptNames.set(catalog, (names = flattened));
  }
  return names.has(name);
}

/** A client's request for a prompt or resource, for the audit record of its refusal. */
interface ContentRequest {
  readonly method: string;
  readonly requestId: RequestId;
}

async function promptRoute(context: GatewayContext, session: ContentSession, name: string, request?: ContentRequest) {
  const snapshot = await session.settledSnapshot();
  const route = snapshot.promptRoutes.get(name);
  if (route) return route;
  if (request) recordPolicyRefusal(context, 'prompt', name, request);
  const hint = unusableServerHint(context, (server) => name.startsWith(`${server}_`));
  const listed = [...snapshot.promptRoutes.keys()];
  const known = listed.length ? `listed prompts: ${listed.slice(0, 20).join(', ')}` : 'equip a toolset that uses its server';
  throw new ProtocolError(ProtocolErrorCode.InvalidParams, `Prompt '${name}' is not listed in this session; ${hint ?? known}`);
}

async function resourceTarget(
  context: GatewayContext,
  session: ContentSession,
  uri: string,
  request?: ContentRequest,
): Promise<ResourceTarget> {
  const snapshot = await session.settledSnapshot();
  const target = context.resourceRoutes.resolve(context.catalog.current, uri, snapshot.servers);
  if (target) return target;
  if (request) recordPolicyRefusal(context, 'resource', uri, request);
  const hint = unusableServerHint(context, (server) => uri.startsWith(`loadout://${server}/`));
  throw new ProtocolError(
    RESOURCE_NOT_FOUND,
    `Resource not found: ${uri} (${hint ?? 'no server this session uses lists it or has a template that matches it'})`,
    { uri },
  );
}

// A prompt or resource the policy hides is refused as an unknown one; only its audit record says why.
function recordPolicyRefusal(context: GatewayContext, kind: 'prompt' | 'resource', nameOrUri: string, request: ContentRequest): void {
  if (!context.audit.enabled || !context.hiddenContent(kind, nameOrUri)) return;
  context.audit.record({
    startedAt: Date.now(),
    principal: context.principal,
    action: kind,
    method: request.method,
    tool: nameOrUri,
    hasArguments: false,
    outcome: 'denied-policy',
    durationMs: 0,
    requestId: request.requestId,
  });
}

// Routing never reads names or URIs; this only words the error for a server that is configured
// but disabled or down, when the name or URI carries its prefix.
function unusableServerHint(context: GatewayContext, carries: (server: string) => boolean): string | undefined {
  for (const [server, config] of Object.entries(context.pool.configs)) {
    if (!carries(server)) continue;
    if (!config.enabled) return `its server '${server}' is disabled in servers.yaml (enabled: false)`;
    if (!context.isServerAvailable(server)) return `its server '${server}' is down; loadout keeps trying to reconnect it`;
  }
  return undefined;
}

// The server answered for its own URI; the client asked by the prefixed one and must see that.
function withExposedUri(result: ReadResourceResult, downstreamUri: string, exposedUri: string): ReadResourceResult {
  if (!Array.isArray(result.contents)) return result;
  const contents = result.contents.map((content) => (content.uri === downstreamUri ? { ...content, uri: exposedUri } : content));
  return { ...result, contents };
}
