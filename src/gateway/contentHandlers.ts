// The client-facing handlers for everything but tools: prompts, resources (list, templates,
// read, subscribe), completions and logging. Each routes by the session's snapshot (prompt
// names) or the resource maps (URIs), rewrites only the name or URI, and sends the request on
// through forward() (progress, cancellation, relays and failures handled there, as for tools),
// returning the owning server's answer unchanged.
import type { Server } from '@modelcontextprotocol/sdk/server/index.js';
import {
  CompleteRequestSchema,
  ErrorCode,
  GetPromptRequestSchema,
  ListPromptsRequestSchema,
  ListResourceTemplatesRequestSchema,
  ListResourcesRequestSchema,
  McpError,
  ReadResourceRequestSchema,
  SetLevelRequestSchema,
  SubscribeRequestSchema,
  UnsubscribeRequestSchema,
  type ServerCapabilities,
} from '@modelcontextprotocol/sdk/types.js';
import type { ResourceTarget } from '../catalog/index.js';
import type { RegistrySnapshot } from '../registry/index.js';
import type { GatewayContext } from './context.js';
import { clientRequestOf, forward, type RequestExtra } from './forward.js';
import { listResourcePage, type ResourceListKind } from './resourcePages.js';
import type { HubMember } from './sessionHub.js';

/** What loadout declares beside tools. */
export const CONTENT_CAPABILITIES: ServerCapabilities = {
  prompts: { listChanged: true },
  resources: { subscribe: true, listChanged: true },
  completions: {},
  logging: {},
};

/** The JSON-RPC error code the spec gives an unknown resource URI. */
export const RESOURCE_NOT_FOUND = -32002;

/** What the handlers read from their session. */
export interface ContentSession {
  /** The session's exposed set once start-up discovery has settled. */
  settledSnapshot(): Promise<RegistrySnapshot>;
  readonly member: HubMember;
}

/** Register the prompt, resource, completion and logging handlers of one session. */
export function serveContent(server: Server, context: GatewayContext, session: ContentSession): void {
  const { hub } = context;
  // `label` names the request in failures, e.g. "prompts/get of a_simple_prompt".
  const send = (target: string, method: string, params: Record<string, unknown>, label: string, extra: RequestExtra) =>
    forward(context.pool, { server: target, method, params, label: `${method} of ${label}` }, clientRequestOf(extra, server));

  server.setRequestHandler(ListPromptsRequestSchema, async () => ({ prompts: [...(await session.settledSnapshot()).prompts] }));

  server.setRequestHandler(GetPromptRequestSchema, async (message, extra) => {
    const route = await promptRoute(context, session, message.params.name);
    return send(route.server, 'prompts/get', { ...message.params, name: route.prompt }, message.params.name, extra);
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
  server.setRequestHandler(ListResourcesRequestSchema, async (message, extra) => {
    const page = await listPage('resources', message.params?.cursor, extra);
    return { resources: page.items, ...(page.nextCursor ? { nextCursor: page.nextCursor } : {}) };
  });
  server.setRequestHandler(ListResourceTemplatesRequestSchema, async (message, extra) => {
    const page = await listPage('resourceTemplates', message.params?.cursor, extra);
    return { resourceTemplates: page.items, ...(page.nextCursor ? { nextCursor: page.nextCursor } : {}) };
  });

  server.setRequestHandler(ReadResourceRequestSchema, async (message, extra) => {
    const exposed = message.params.uri;
    const target = await resourceTarget(context, session, exposed);
    const result = await send(target.server, 'resources/read', { ...message.params, uri: target.uri }, exposed, extra);
    return exposed === target.uri ? result : withExposedUri(result, target.uri, exposed);
  });

  server.setRequestHandler(SubscribeRequestSchema, async (message, extra) => {
    const target = await resourceTarget(context, session, message.params.uri);
    await hub.subscribe(session.member, target, message.params.uri, () =>
      send(target.server, 'resources/subscribe', { ...message.params, uri: target.uri }, message.params.uri, extra),
    );
    return {};
  });
  server.setRequestHandler(UnsubscribeRequestSchema, async (message) => {
    await hub.unsubscribe(session.member, await resourceTarget(context, session, message.params.uri));
    return {};
  });

  server.setRequestHandler(CompleteRequestSchema, async (message, extra) => {
    const { ref } = message.params;
    if (ref.type === 'ref/prompt') {
      const route = await promptRoute(context, session, ref.name);
      return send(route.server, 'completion/complete', { ...message.params, ref: { ...ref, name: route.prompt } }, ref.name, extra);
    }
    const snapshot = await session.settledSnapshot();
    const target =
      context.catalog.current.resourceUris.resolveTemplate(ref.uri, snapshot.servers) ?? (await resourceTarget(context, session, ref.uri));
    return send(target.server, 'completion/complete', { ...message.params, ref: { ...ref, uri: target.uri } }, ref.uri, extra);
  });

  server.setRequestHandler(SetLevelRequestSchema, async (message) => {
    await hub.setLevel(session.member, message.params.level);
    return {};
  });
}

async function promptRoute(context: GatewayContext, session: ContentSession, name: string) {
  const snapshot = await session.settledSnapshot();
  const route = snapshot.promptRoutes.get(name);
  if (route) return route;
  const hint = unusableServerHint(context, (server) => name.startsWith(`${server}_`));
  const listed = [...snapshot.promptRoutes.keys()];
  const known = listed.length ? `listed prompts: ${listed.slice(0, 20).join(', ')}` : 'equip a toolset that uses its server';
  throw new McpError(ErrorCode.InvalidParams, `Prompt '${name}' is not listed in this session; ${hint ?? known}`);
}

async function resourceTarget(context: GatewayContext, session: ContentSession, uri: string): Promise<ResourceTarget> {
  const snapshot = await session.settledSnapshot();
  const target = context.resourceRoutes.resolve(context.catalog.current, uri, snapshot.servers);
  if (target) return target;
  const hint = unusableServerHint(context, (server) => uri.startsWith(`loadout://${server}/`));
  throw new McpError(
    RESOURCE_NOT_FOUND,
    `Resource not found: ${uri} (${hint ?? 'no server this session uses lists it or has a template that matches it'})`,
    { uri },
  );
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
function withExposedUri(result: Record<string, unknown>, downstreamUri: string, exposedUri: string): Record<string, unknown> {
  if (!Array.isArray(result.contents)) return result;
  const contents = (result.contents as Array<Record<string, unknown>>).map((content) =>
    content.uri === downstreamUri ? { ...content, uri: exposedUri } : content,
  );
  return { ...result, contents };
}
