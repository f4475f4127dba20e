// The cache of full downstream definitions: tools (schemas, annotations, outputSchema)
// and, beside them, each server's prompts, resources, resource templates and capabilities, so a
// warm start answers every list from disk without spawning anything and servers.yaml stays
// readable (it holds only the tool switchboard).
import type { Prompt, Resource, ResourceTemplateType, ServerCapabilities, Tool } from '@modelcontextprotocol/server';
import * as z from 'zod';
import {
  EraVerdictSchema,
  ListFailureSchema,
  OPTIONAL_LIST_NAMES,
  isListOf,
  type ServerAbout,
  type ServerDefinitions,
} from '../downstream/index.js';
import { rememberToolHash, toolHash } from './toolHash.js';

// Tools are checked, not parsed: a looseObject parse would copy each of thousands of definitions
// (time and garbage on every warm start), and they are passed on untouched anyway. Each list is
// one check rather than a zod array of per-tool checks: that halves reading a 2,500-tool cache.
const CachedToolsSchema = z.custom<Tool[]>((tools) => isListOf(tools, 'name'), {
  message: 'every cached tool needs a string "name"',
});
const ToolHashesSchema = z.custom<Record<string, string>>(
  (hashes) =>
    typeof hashes === 'object' &&
    hashes !== null &&
    !Array.isArray(hashes) &&
    Object.values(hashes).every((hash) => typeof hash === 'string'),
  { message: 'tool hashes must map names to strings' },
);
// Prompts, resources and templates are passed on untouched too; only what loadout reads is checked.
const namedList = <T>(key: 'name' | 'uri' | 'uriTemplate') =>
  z.custom<T[]>((items) => isListOf(items, key), { message: `every cached entry needs a string "${key}"` });
const CachedServerSchema = z.looseObject({
  discoveredAt: z.string(),
  tools: CachedToolsSchema,
  prompts: namedList<Prompt>('name').optional(),
  resources: namedList<Resource>('uri').optional(),
  resourceTemplates: namedList<ResourceTemplateType>('uriTemplate').optional(),
  capabilities: z.custom<ServerCapabilities>((value) => typeof value === 'object' && value !== null).optional(),
  about: z.custom<ServerAbout>((value) => typeof value === 'object' && value !== null).optional(),
  // A cache written before failures kept their JSON-RPC code holds the words alone.
  listFailures: z
    .partialRecord(z.enum(OPTIONAL_LIST_NAMES), z.union([ListFailureSchema, z.string().transform((text) => ({ text }))]))
    .optional(),
  // Only saves a probe: an era that does not parse is forgotten, not a reason to rediscover everything.
  era: EraVerdictSchema.optional().catch(undefined),
  /** toolHash of each tool by name, stored so a warm start need not hash every definition. */
  hashes: ToolHashesSchema.optional(),
  /** In store mode, the approved toolHash of each tool by name (storedApprovals.ts). */
  approved: ToolHashesSchema.optional(),
});

/**
 * Discovered definitions of one server, as its last listing left them (a list it failed to list
 * keeps what was cached before, beside its failure), and when.
 */
export interface CachedServerTools extends ServerDefinitions {
  discoveredAt: string;
  /** In store mode, the approved fingerprint (toolHash) of each tool by name: servers.yaml is not written there. */
  approved?: Record<string, string>;
}

/** A change of one server's entry (`undefined`: no entry), applied to what the file holds then. */
export interface DefinitionChange {
  server: string;
  change: (entry: CachedServerTools | undefined) => CachedServerTools | undefined;
}

/** An entry as kept: its tool hashes (toolHash by name) beside it. */
export type StoredServerTools = CachedServerTools & { hashes?: Record<string, string> };

/** Cached definitions by server name. */
export type DefinitionCache = Record<string, CachedServerTools>;

/** Where the cached definitions are kept: the store's catalog records (storedDefinitions.ts; files mode: catalog.json). */
export interface DefinitionSource {
  /** Every server's entry as kept now. */
  read(): Promise<DefinitionCache>;
  /** Apply `changes`, in order, to the entries as kept then (another writer's change in between is built on, not replaced). */
  update(changes: readonly DefinitionChange[]): Promise<void>;
}

/** Entries as kept (tool hashes beside them) → checked entries, each tool's hash remembered; throws when one is not valid. */
export function keptEntries(servers: unknown): DefinitionCache {
  const parsed = z.record(z.string(), CachedServerSchema).parse(servers);
  for (const entry of Object.values(parsed)) {
    for (const tool of entry.tools) {
      const hash = entry.hashes?.[tool.name];
      if (hash) rememberToolHash(tool, hash);
    }
    delete entry.hashes;
  }
  return parsed;
}

/** `entry` as kept, its tool hashes beside it: those of `previous` when its tools are the same list, else computed. */
export function entryToKeep(previous: StoredServerTools | undefined, entry: CachedServerTools): StoredServerTools {
  // Tools the change kept keep their stored hashes: hashing them again would only cost time.
  const kept = previous?.hashes !== undefined && entry.tools === previous.tools;
  return { ...entry, hashes: kept ? previous.hashes : Object.fromEntries(entry.tools.map((tool) => [tool.name, toolHash(tool)])) };
}

/** An entry as kept, without its tool hashes. */
export function withoutHashes({ hashes: _hashes, ...entry }: StoredServerTools): CachedServerTools {
  return entry;
}
