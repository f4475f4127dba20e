// The fingerprint of a downstream tool (its input schema, output schema and description), so a
// tool silently altered upstream ("rug pull") can be told apart from the one the user approved.
import type { Tool } from '@modelcontextprotocol/server';
import { createHash } from 'node:crypto';
import { canonicalJson, oneLine } from '../shared/index.js';

const HASH_LENGTH = 12;
// Definitions are immutable once cached, so each is hashed at most once per process.
const memo = new WeakMap<object, string>();

/** A short, stable hash of a tool's schema and description (key order does not matter). */
export function toolHash(definition: Tool): string {
  let hash = memo.get(definition);
  if (hash === undefined) {
    const fingerprint = canonicalJson({
      description: definition.description ?? '',
      inputSchema: definition.inputSchema,
      outputSchema: definition.outputSchema ?? null,
    });
    hash = createHash('sha256').update(fingerprint).digest('hex').slice(0, HASH_LENGTH);
    memo.set(definition, hash);
  }
  return hash;
}

/** Seed the memo with a hash computed earlier (stored in the definition cache), so a warm start hashes nothing. */
export function rememberToolHash(definition: Tool, hash: string): void {
  memo.set(definition, hash);
}

/** The one-line description servers.yaml shows next to a tool (for the human; informational). */
export function summaryOf(definition: Tool): string {
  return oneLine(definition.description ?? '', 160);
}
