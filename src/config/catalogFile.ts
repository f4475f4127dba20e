// The document shape of catalog.json (`{ version: 1, servers: { NAME: entry } }`, compact JSON,
// no newline), declared once for the catalog that writes it and the store that moves it. What an
// entry holds is its reader's business: each passes the entry schema it needs.
import * as z from 'zod';

/** catalog.json with entries checked by `entry`; keys beyond `version` and `servers` are kept. */
export function catalogFileSchema<Entry extends z.ZodType>(entry: Entry) {
  return z.looseObject({ version: z.literal(1), servers: z.record(z.string(), entry) });
}

/**
 * The text of catalog.json holding `servers`, as loadout writes it: ASCII, each other character
 * escaped (\uXXXX). One emoji in one description would otherwise make the whole text a two-byte
 * string when read, twice the memory of every warm start's largest read (7 MB more at 5,000 tools).
 */
export function catalogFileText(servers: Readonly<Record<string, unknown>>): string {
  return JSON.stringify({ version: 1, servers }).replace(NON_ASCII, (char) => `\\u${char.charCodeAt(0).toString(16).padStart(4, '0')}`);
}

const NON_ASCII = /[\u0080-\uffff]/g;
