// The user's words for search: per-tool `keywords:` in servers.yaml, and synonym groups in the
// config dir's synonyms.yaml (a list of word lists: each list's words mean the same to you).
import * as z from 'zod';
import type { ServerConfig } from '../config/index.js';
import { readTextIfExists } from '../config/index.js';
import { LoadoutError, errorMessage, yamlModule } from '../shared/index.js';
import { toolId } from './catalog.js';
import type { DefinitionCache } from './definitionCache.js';
import { toolHash } from './toolHash.js';
import { contentWordsOf } from './searchText.js';

const SynonymsFileSchema = z.array(z.array(z.string().min(1)).min(2));

/** Each tool's `keywords:` from servers.yaml, as index text by tool id. */
export function keywordsOf(configs: Readonly<Record<string, ServerConfig>>): Map<string, string> {
  const keywords = new Map<string, string>();
  for (const [server, config] of Object.entries(configs)) {
    for (const [tool, setting] of Object.entries(config.tools ?? {})) {
      if (setting?.keywords?.length) keywords.set(toolId(server, tool), setting.keywords.join(' '));
    }
  }
  return keywords;
}

/** Word → the other words of its groups, from synonyms.yaml; empty when the file does not exist. */
export async function readSynonyms(file: string): Promise<Map<string, string[]>> {
  const text = await readTextIfExists(file);
  const synonyms = new Map<string, string[]>();
  if (text === undefined) return synonyms;
  let groups: string[][];
  try {
    groups = SynonymsFileSchema.parse(yamlModule().parse(text) ?? []);
  } catch (error) {
    throw new LoadoutError('CONFIG_INVALID', `${file} must be a list of word lists, e.g. "- [sprint, cycle]": ${errorMessage(error)}`, {
      cause: error,
    });
  }
  for (const group of groups) {
    const words = [...new Set(group.flatMap((phrase) => contentWordsOf(phrase)))];
    for (const word of words) synonyms.set(word, [...new Set([...(synonyms.get(word) ?? []), ...words.filter((other) => other !== word)])]);
  }
  return synonyms;
}

/** Example requests (stored by tool hash) as index text by tool id; only tools whose hash matches. */
export function examplesByTool(definitions: DefinitionCache, byHash: ReadonlyMap<string, readonly string[]>): Map<string, string> {
  const examples = new Map<string, string>();
  if (!byHash.size) return examples;
  for (const [server, cached] of Object.entries(definitions)) {
    for (const definition of cached.tools) {
      const requests = byHash.get(toolHash(definition));
      if (requests?.length) examples.set(toolId(server, definition.name), requests.join(' \n '));
    }
  }
  return examples;
}
