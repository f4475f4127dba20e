// What a server lists, as the catalog takes it from a connection: its tools, the optional lists it
// declared (prompts, resources, templates) and why any of those failed, and its own words about itself.
import type { Prompt, Resource, ResourceTemplateType, ServerCapabilities, Tool } from '@modelcontextprotocol/client';
import { ProtocolErrorCode } from '@modelcontextprotocol/server';
import * as z from 'zod';
import type { EraVerdict } from './era.js';

/** The lists a server may declare beside its tools; each one may fail without the others. */
export const OPTIONAL_LIST_NAMES = ['prompts', 'resources', 'resourceTemplates'] as const;
export type OptionalList = (typeof OPTIONAL_LIST_NAMES)[number];

/**
 * Why one optional list could not be listed: the words (e.g. "resources/list failed: connect
 * ECONNREFUSED … (-32603)") and, when the server answered with a JSON-RPC error, its code, which
 * says the kind (-32601: a list declared but never implemented) where the words may not.
 */
export const ListFailureSchema = z.strictObject({ text: z.string(), rpcCode: z.number().int().optional() });
export type ListFailure = z.infer<typeof ListFailureSchema>;

/** Why each optional list the server declared could not be listed. */
export type ListFailures = Partial<Record<OptionalList, ListFailure>>;

/** Whether the server answered "method not found" (-32601): it declares the list but never implemented it. */
export function isUnimplementedList(failure: ListFailure): boolean {
  return failure.rpcCode === (ProtocolErrorCode.MethodNotFound as number);
}

/**
 * Everything a server lists, for the catalog. A list the server did not declare is left out; one
 * it declared but failed to answer is left out too and named in `listFailures`.
 */
export interface ServerDefinitions {
  tools: Tool[];
  prompts?: Prompt[];
  resources?: Resource[];
  resourceTemplates?: ResourceTemplateType[];
  capabilities?: ServerCapabilities;
  /** What the server said about itself at its handshake (serverInfo title/description, instructions). */
  about?: ServerAbout;
  /** The era the connection negotiated, for the next start to skip the probe. */
  era?: EraVerdict;
  /** The lists it declared but failed to answer, with why. */
  listFailures?: ListFailures;
}

/** A server's own words about what it is for; fields it did not send are left out. */
export interface ServerAbout {
  title?: string;
  description?: string;
  instructions?: string;
}

// The optional lists: the request that fetches each, the key of its entries and their identifying field.
export const OPTIONAL_LISTS = [
  { list: 'prompts', method: 'prompts/list', idField: 'name', declared: (capabilities) => capabilities.prompts !== undefined },
  { list: 'resources', method: 'resources/list', idField: 'uri', declared: (capabilities) => capabilities.resources !== undefined },
  {
    list: 'resourceTemplates',
    method: 'resources/templates/list',
    idField: 'uriTemplate',
    declared: (capabilities) => capabilities.resources !== undefined,
  },
] as const satisfies ReadonlyArray<{
  list: OptionalList;
  method: string;
  idField: string;
  declared: (capabilities: ServerCapabilities) => boolean;
}>;

/** Whether a page's entries all carry their identifying field. */
export function isListOf(entries: unknown, idField: string): entries is Array<Record<string, unknown>> {
  return (
    Array.isArray(entries) &&
    entries.every((entry) => typeof entry === 'object' && entry !== null && typeof (entry as Record<string, unknown>)[idField] === 'string')
  );
}
