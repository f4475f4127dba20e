// Reads, validates and rewrites servers.yaml. Rewrites go through the yaml Document API so the
// user's comments and key order survive, and never happen while the file on disk is invalid.
import type { Document, LineCounter } from 'yaml';
import type { z } from 'zod';
import { LoadoutError, yamlModule } from '../shared/index.js';
import { ServersFileSchema, type ServersFile } from './schema.js';
import { readTextIfExists, updateTextFile } from './safeWrite.js';

/** servers.yaml may hold a literal secret (kept with --keep-secrets, or written by hand): every write makes it private. */
export const SERVERS_FILE_MODE = 0o600;

/** A parsed servers.yaml: the validated config plus the document it came from. */
interface LoadedServersFile {
  config: ServersFile;
  document: Document;
  /** False when the file does not exist yet (an empty config stands in for it). */
  exists: boolean;
}

/** Parse servers.yaml text; malformed YAML or a schema error throws CONFIG_INVALID with line and column. */
export function parseServersFile(text: string, file: string): LoadedServersFile {
  const yaml = yamlModule();
  const lineCounter = new yaml.LineCounter();
  const document = yaml.parseDocument(text, { lineCounter, prettyErrors: false });
  const syntaxError = document.errors[0];
  if (syntaxError) {
    const at = lineCounter.linePos(syntaxError.pos[0]);
    throw new LoadoutError('CONFIG_INVALID', `${file}:${at.line}:${at.col}: ${firstLine(syntaxError.message)}`);
  }
  const parsed = ServersFileSchema.safeParse(document.toJS() ?? {});
  if (!parsed.success) throw schemaError(parsed.error, document, lineCounter, file);
  return { config: parsed.data, document, exists: true };
}

/** Load servers.yaml; a missing file is an empty config. */
export async function loadServersFile(file: string): Promise<LoadedServersFile> {
  const text = await readTextIfExists(file);
  if (text === undefined) return { ...parseServersFile('servers: {}\n', file), exists: false };
  return parseServersFile(text, file);
}

/**
 * Change servers.yaml under the inter-process lock: re-read, let `edit` change the document,
 * validate, write atomically. Throws (and writes nothing) if the file on disk is invalid.
 */
export async function updateServersFile(file: string, edit: (document: Document, config: ServersFile) => void): Promise<ServersFile> {
  let result: ServersFile | undefined;
  await updateTextFile(
    file,
    (current) => {
      const base = current ?? 'servers: {}\n';
      const loaded = parseServersFile(base, file);
      edit(loaded.document, loaded.config);
      const next = loaded.document.toString({ lineWidth: 0 });
      result = parseServersFile(next, file).config;
      // An edit that changed nothing writes nothing (and does not create a missing file).
      return next === base ? undefined : next;
    },
    { mode: SERVERS_FILE_MODE },
  );
  return result!;
}

function schemaError(error: z.ZodError, document: Document, lineCounter: LineCounter, file: string): LoadoutError {
  const issue = error.issues[0]!;
  const issuePath = issue.path.map(String);
  // An unknown key is best shown at the key itself, not at the map that holds it.
  const node =
    (issue.code === 'unrecognized_keys' ? keyNode(document, issuePath, issue.keys[0]) : undefined) ?? deepestNode(document, issuePath);
  const position = node?.range ? lineCounter.linePos(node.range[0]) : { line: 1, col: 1 };
  const where = issuePath.length ? ` at ${issuePath.join('.')}` : '';
  return new LoadoutError('CONFIG_INVALID', `${file}:${position.line}:${position.col}: ${issue.message}${where}`);
}

type RangedNode = { range?: [number, number, number] | null };

// The deepest node that exists gives the best position (a missing key points at its parent).
function deepestNode(document: Document, issuePath: string[]): RangedNode | undefined {
  for (let depth = issuePath.length; depth >= 0; depth--) {
    const node = document.getIn(issuePath.slice(0, depth), true) as RangedNode | undefined;
    if (node?.range) return node;
  }
  return undefined;
}

function keyNode(document: Document, mapPath: string[], key: string | undefined): RangedNode | undefined {
  const map = mapPath.length ? document.getIn(mapPath, true) : document.contents;
  const { isMap, isScalar } = yamlModule();
  if (key === undefined || !isMap(map)) return undefined;
  const pair = map.items.find((item) => isScalar(item.key) && String(item.key.value) === key);
  return isScalar(pair?.key) ? pair.key : undefined;
}

function firstLine(text: string): string {
  return text.split('\n')[0] ?? text;
}
