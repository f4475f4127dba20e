// Which server owns a resource URI, and the URI the client sees for it. A downstream URI is shown
// unchanged while one server has it; when two or more servers list the same URI (or the same
// template), each gets the prefixed form `loadout://<server>/<downstream URI>`, except an App's
// View: `ui://x` becomes `ui://loadout/<server>/x`, since a host renders only the `ui` scheme. Reads
// are routed by these maps (and by matching the servers' templates), never by taking a URI apart.
import { UriTemplate } from '@modelcontextprotocol/server';
import type { Resource, ResourceTemplateType } from '@modelcontextprotocol/server';
import { isUiUri } from './appTools.js';

/** Where a client-facing resource URI goes. */
export interface ResourceTarget {
  readonly server: string;
  /** The URI as the server knows it. */
  readonly uri: string;
}

/** What the index is built from: each enabled server's cached resources and templates. */
export interface ServerResources {
  readonly resources?: readonly Resource[];
  readonly resourceTemplates?: readonly ResourceTemplateType[];
}

/** The prefixed form of a downstream URI or template that more than one server has; a `ui://` one keeps its scheme. */
export function prefixedResourceUri(server: string, uri: string): string {
  return isUiUri(uri) ? `ui://loadout/${server}/${uri.slice(UI_SCHEME.length)}` : `loadout://${server}/${uri}`;
}

const UI_SCHEME = 'ui://';

interface CompiledTemplate {
  readonly server: string;
  readonly exposed: UriTemplate;
  readonly downstream: UriTemplate;
}

/** An immutable index over the cached resources of every enabled server. */
export class ResourceUriIndex {
  /** Downstream URI (or template) → the servers that list it. */
  readonly #uriOwners = new Map<string, string[]>();
  readonly #templateOwners = new Map<string, string[]>();
  /** Prefixed URI → target, for URIs listed by more than one server. */
  readonly #prefixed = new Map<string, ResourceTarget>();
  #templates: CompiledTemplate[] | undefined;
  readonly #servers: ReadonlyMap<string, ServerResources>;

  constructor(servers: ReadonlyMap<string, ServerResources>) {
    this.#servers = servers;
    for (const [server, listed] of servers) {
      for (const resource of listed.resources ?? []) addOwner(this.#uriOwners, resource.uri, server);
      for (const template of listed.resourceTemplates ?? []) addOwner(this.#templateOwners, template.uriTemplate, server);
    }
    for (const [uri, owners] of this.#uriOwners) {
      if (owners.length > 1) for (const server of owners) this.#prefixed.set(prefixedResourceUri(server, uri), { server, uri });
    }
  }

  /** The URI a client sees for `uri` of `server`. */
  exposedUri(server: string, uri: string): string {
    return isShared(this.#uriOwners.get(uri), server) ? prefixedResourceUri(server, uri) : uri;
  }

  /** The URI template a client sees for `uriTemplate` of `server`. */
  exposedTemplate(server: string, uriTemplate: string): string {
    return isShared(this.#templateOwners.get(uriTemplate), server) ? prefixedResourceUri(server, uriTemplate) : uriTemplate;
  }

  /**
   * The server and downstream URI behind a client-facing URI, among `servers` (the session's):
   * a listed URI first, then the first template of those servers that matches it.
   */
  resolve(exposed: string, servers: ReadonlySet<string>): ResourceTarget | undefined {
    const prefixed = this.#prefixed.get(exposed);
    if (prefixed) return servers.has(prefixed.server) ? prefixed : undefined;
    const owner = this.#uriOwners.get(exposed)?.find((server) => servers.has(server));
    if (owner) return { server: owner, uri: exposed };
    for (const template of this.#compiledTemplates()) {
      if (!servers.has(template.server)) continue;
      const variables = template.exposed.match(exposed);
      if (variables)
        return { server: template.server, uri: template.exposed === template.downstream ? exposed : template.downstream.expand(variables) };
    }
    return undefined;
  }

  /** The server and downstream template behind a client-facing template (for completions). */
  resolveTemplate(exposed: string, servers: ReadonlySet<string>): ResourceTarget | undefined {
    for (const [uriTemplate, owners] of this.#templateOwners) {
      for (const server of owners) {
        if (servers.has(server) && this.exposedTemplate(server, uriTemplate) === exposed) return { server, uri: uriTemplate };
      }
    }
    return undefined;
  }

  // Compiling templates costs a little; only a read of an unlisted URI needs them.
  #compiledTemplates(): CompiledTemplate[] {
    this.#templates ??= [...this.#servers].flatMap(([server, listed]) =>
      (listed.resourceTemplates ?? []).flatMap((template) => {
        try {
          const downstream = new UriTemplate(template.uriTemplate);
          const exposedText = this.exposedTemplate(server, template.uriTemplate);
          return [{ server, downstream, exposed: exposedText === template.uriTemplate ? downstream : new UriTemplate(exposedText) }];
        } catch {
          // A template the SDK cannot parse cannot be matched; its resources stay readable by listed URI.
          return [];
        }
      }),
    );
    return this.#templates;
  }
}

function addOwner(owners: Map<string, string[]>, key: string, server: string): void {
  const list = owners.get(key);
  if (!list) owners.set(key, [server]);
  else if (!list.includes(server)) list.push(server);
}

function isShared(owners: readonly string[] | undefined, server: string): boolean {
  return owners !== undefined && owners.length > 1 && owners.includes(server);
}
