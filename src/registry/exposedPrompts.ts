// The prompts a session lists: every prompt of the servers it uses, plus prompts its toolset
// names explicitly, under flattened names built like tool names (`server_prompt`, same length
// budget, stable hash suffix on a collision), each routed back to (server, prompt) by a map.
import type { Prompt } from '@modelcontextprotocol/server';
import type { Catalog } from '../catalog/index.js';
import { parseToolId } from '../catalog/index.js';
import { assignExposedNames } from './flatten.js';

/** Where a prompts/get (or a prompt completion) for an exposed prompt name goes. */
export interface PromptRoute {
  readonly server: string;
  /** The downstream prompt name. */
  readonly prompt: string;
  /** `server.prompt`. */
  readonly id: string;
}

/**
 * The listed prompts and their routes. `servers` are the session's servers; `explicit` are
 * `server.prompt` ids named by the toolset (those of unavailable servers or unknown are skipped).
 */
export function exposePrompts(
  catalog: Catalog,
  servers: ReadonlySet<string>,
  explicit: readonly string[],
  available: (server: string) => boolean,
  maxNameLength: number,
): { prompts: Prompt[]; promptRoutes: Map<string, PromptRoute> } {
  const chosen = new Map<string, { server: string; prompt: Prompt }>();
  for (const server of servers) {
    for (const prompt of catalog.definitionsOf(server)?.prompts ?? []) chosen.set(`${server}.${prompt.name}`, { server, prompt });
  }
  for (const id of explicit) {
    const parsed = parseToolId(id);
    if (!parsed || chosen.has(id) || !available(parsed.server)) continue;
    const prompt = catalog.definitionsOf(parsed.server)?.prompts?.find((candidate) => candidate.name === parsed.tool);
    if (prompt) chosen.set(id, { server: parsed.server, prompt });
  }
  const names = assignExposedNames([...chosen.keys()], maxNameLength);
  const prompts: Prompt[] = [];
  const promptRoutes = new Map<string, PromptRoute>();
  for (const [id, { server, prompt }] of chosen) {
    const name = names.get(id)!;
    prompts.push({ ...prompt, name });
    promptRoutes.set(name, Object.freeze({ server, prompt: prompt.name, id }));
  }
  return { prompts, promptRoutes };
}

/**
 * The cached resource and template lists of `servers`, in order (a change replaces the list object).
 * A server that lists none adds nothing to the session's resources, so it is left out: equipping
 * its tools is no resources change, and a client is not told to re-read a list that stayed the same.
 */
export function resourceListsOf(catalog: Catalog, servers: ReadonlySet<string>): unknown[] {
  return [...servers].flatMap((server) => {
    const definitions = catalog.definitionsOf(server);
    if (!definitions?.resources?.length && !definitions?.resourceTemplates?.length) return [];
    return [server, definitions.resources, definitions.resourceTemplates];
  });
}
