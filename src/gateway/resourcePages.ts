// resources/list and resources/templates/list over the servers a session uses, in order. A
// server that is running answers live, page by page (its own cursor is passed through inside
// ours); a lazy server that is not running is answered from the catalog cache, so listing never
// spawns one. Pages of consecutive servers are joined until a downstream says it has more.
import { ProtocolError, ProtocolErrorCode } from '@modelcontextprotocol/server';
import type { Resource, ResourceTemplateType } from '@modelcontextprotocol/server';
import type { Catalog, ResourceTarget } from '../catalog/index.js';
import { errorMessage, type Logger } from '../shared/index.js';

// URIs seen only in live pages (not in the cache) are remembered for reads; this bounds the memory.
const MAX_LIVE_ROUTES = 10_000;

/** Which list a page belongs to. */
export type ResourceListKind = 'resources' | 'resourceTemplates';

const METHODS: Record<ResourceListKind, string> = { resources: 'resources/list', resourceTemplates: 'resources/templates/list' };

/** Client-facing resource URIs → owner, for the catalog's URIs and for those seen in live pages. */
export class ResourceRoutes {
  readonly #live = new Map<string, ResourceTarget>();

  /** The server and downstream URI behind `uri`, among `servers`; undefined if none has it. */
  resolve(catalog: Catalog, uri: string, servers: ReadonlySet<string>): ResourceTarget | undefined {
    const live = this.#live.get(uri);
    if (live && servers.has(live.server)) return live;
    return catalog.resourceUris.resolve(uri, servers);
  }

  /** Remember a URI a running server listed that the cache does not hold. */
  remember(uri: string, target: ResourceTarget): void {
    this.#live.delete(uri);
    this.#live.set(uri, target);
    if (this.#live.size > MAX_LIVE_ROUTES) this.#live.delete(this.#live.keys().next().value!);
  }
}

/** What a page is built from. */
export interface ResourcePageSources {
  catalog: Catalog;
  isConnected(server: string): boolean;
  /** Forwards a list request to a running server on behalf of the client's request. */
  request(server: string, method: string, params: Record<string, unknown>): Promise<Record<string, unknown>>;
  routes: ResourceRoutes;
  logger: Logger;
}

interface Position {
  server: string;
  cursor?: string;
}

/** One page of resources or templates for a session using `servers`. */
export async function listResourcePage(
  kind: ResourceListKind,
  servers: ReadonlySet<string>,
  cursor: string | undefined,
  sources: ResourcePageSources,
): Promise<{ items: Array<Resource | ResourceTemplateType>; nextCursor?: string }> {
  const order = [...servers].filter((server) => offersResources(sources.catalog, server));
  const position = cursor === undefined ? undefined : decodeCursor(cursor);
  let index = position ? order.indexOf(position.server) : 0;
  if (index === -1)
    throw new ProtocolError(
      ProtocolErrorCode.InvalidParams,
      `This cursor points at server '${position!.server}', which this session no longer uses; list again without a cursor`,
    );
  let downstreamCursor = position?.cursor;
  const items: Array<Resource | ResourceTemplateType> = [];
  for (; index < order.length; index++) {
    const server = order[index]!;
    const live = sources.isConnected(server) ? await listLive(kind, server, downstreamCursor, sources) : undefined;
    if (live) {
      items.push(...live.items.map((item) => expose(kind, server, item, sources, true)));
      if (live.nextCursor !== undefined) return { items, nextCursor: encodeCursor({ server, cursor: live.nextCursor }) };
    } else if (downstreamCursor === undefined) {
      const cached = sources.catalog.definitionsOf(server)?.[kind] ?? [];
      items.push(...cached.map((item) => expose(kind, server, item, sources, false)));
    }
    downstreamCursor = undefined;
  }
  return { items };
}

// A running server's page; if the request fails (it crashed meanwhile), the cache answers instead.
async function listLive(
  kind: ResourceListKind,
  server: string,
  cursor: string | undefined,
  sources: ResourcePageSources,
): Promise<{ items: Array<Resource | ResourceTemplateType>; nextCursor?: string } | undefined> {
  try {
    const page = await sources.request(server, METHODS[kind], cursor === undefined ? {} : { cursor });
    const items = Array.isArray(page[kind]) ? (page[kind] as Array<Resource | ResourceTemplateType>) : [];
    return { items, nextCursor: typeof page.nextCursor === 'string' ? page.nextCursor : undefined };
  } catch (error) {
    if (cursor !== undefined) throw error;
    // A failure the catalog already records (a list the server declares but does not serve) was
    // reported once at discovery; said again on every client list, it would flood the log.
    const known = sources.catalog.definitionsOf(server)?.listFailures?.[kind] !== undefined;
    const log = known ? sources.logger.debug.bind(sources.logger) : sources.logger.warn.bind(sources.logger);
    log({ mod: 'gateway', server, err: errorMessage(error) }, `${METHODS[kind]} failed; answering from the cache`);
    return undefined;
  }
}

function expose(
  kind: ResourceListKind,
  server: string,
  item: Resource | ResourceTemplateType,
  sources: ResourcePageSources,
  live: boolean,
): Resource | ResourceTemplateType {
  const index = sources.catalog.resourceUris;
  if (kind === 'resourceTemplates') {
    const template = item as ResourceTemplateType;
    const exposed = index.exposedTemplate(server, template.uriTemplate);
    return exposed === template.uriTemplate ? template : { ...template, uriTemplate: exposed };
  }
  const resource = item as Resource;
  const exposed = index.exposedUri(server, resource.uri);
  if (live && exposed === resource.uri && !index.resolve(resource.uri, new Set([server])))
    sources.routes.remember(resource.uri, { server, uri: resource.uri });
  return exposed === resource.uri ? resource : { ...resource, uri: exposed };
}

/** Whether a server declared resources or has cached ones. */
export function offersResources(catalog: Catalog, server: string): boolean {
  const definitions = catalog.definitionsOf(server);
  return (
    definitions?.capabilities?.resources !== undefined ||
    (definitions?.resources?.length ?? 0) > 0 ||
    (definitions?.resourceTemplates?.length ?? 0) > 0
  );
}

function encodeCursor(position: Position): string {
  return Buffer.from(JSON.stringify({ s: position.server, c: position.cursor }), 'utf8').toString('base64url');
}

function decodeCursor(cursor: string): Position {
  try {
    const decoded = JSON.parse(Buffer.from(cursor, 'base64url').toString('utf8')) as { s?: unknown; c?: unknown };
    if (typeof decoded.s === 'string' && (decoded.c === undefined || typeof decoded.c === 'string'))
      return { server: decoded.s, cursor: decoded.c };
  } catch {
    // Reported below.
  }
  throw new ProtocolError(ProtocolErrorCode.InvalidParams, 'Invalid cursor: pass back the nextCursor of the previous page unchanged');
}
