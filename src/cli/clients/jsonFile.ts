// A client's JSON config file as text: parse it (refusing what does not parse), edit it in place
// with jsonc-parser so its comments, key order and indentation survive, and write it back only if
// nobody changed it since it was read.
import { randomBytes } from 'node:crypto';
import { chmod, mkdir, rename, rm, stat, writeFile } from 'node:fs/promises';
import { createRequire } from 'node:module';
import path from 'node:path';
import type * as JsoncParser from 'jsonc-parser';
import { readTextIfExists } from '../../config/index.js';
import { LoadoutError } from '../../shared/index.js';
import { codexServersAsMcp, parseTomlText } from './tomlFile.js';

// Loaded on first use, as cli-table3 is: only setup and doctor read client files.
let jsonc: typeof JsoncParser | undefined;
function jsoncParser(): typeof JsoncParser {
  jsonc ??= createRequire(import.meta.url)('jsonc-parser') as typeof JsoncParser;
  return jsonc;
}

/** A client file as read: its text (undefined when absent) and parsed value. */
export interface JsonFile {
  file: string;
  text: string | undefined;
  data: unknown;
  comments: boolean;
}

/** Read and parse `file`; CONFIG_INVALID (naming line and column) if it is not valid JSON. */
export async function readJsonFile(file: string, comments: boolean): Promise<JsonFile> {
  const text = await readTextIfExists(file);
  if (text === undefined) return { file, text, data: undefined, comments };
  return { file, text, data: parseJsonText(file, text, comments), comments };
}

/**
 * Read the client file of `location`, JSON or TOML (`toml`: Codex CLI's config.toml, whose
 * `mcp_servers` entries are given in the other clients' shape, see codexServersAsMcp).
 */
export async function readClientFile(location: { file: string; comments: boolean; toml?: boolean }): Promise<JsonFile> {
  if (!location.toml) return readJsonFile(location.file, location.comments);
  const text = await readTextIfExists(location.file);
  if (text === undefined) return { file: location.file, text, data: undefined, comments: false };
  const data = parseTomlText(location.file, text);
  return { file: location.file, text, data: { ...data, mcp_servers: codexServersAsMcp(data.mcp_servers) }, comments: false };
}

/** Parse JSON (JSONC when `comments`); throws CONFIG_INVALID with the first error's position. */
export function parseJsonText(file: string, text: string, comments: boolean): unknown {
  const { parse, printParseErrorCode } = jsoncParser();
  const errors: JsoncParser.ParseError[] = [];
  const data: unknown = parse(text, errors, { allowTrailingComma: comments, disallowComments: !comments, allowEmptyContent: true });
  const error = errors[0];
  if (error) {
    const before = text.slice(0, error.offset).split('\n');
    throw new LoadoutError(
      'CONFIG_INVALID',
      `${file}:${before.length}:${before.at(-1)!.length + 1}: ${printParseErrorCode(error.error)}; loadout does not change a file it cannot parse`,
    );
  }
  if (text.trim() !== '' && (typeof data !== 'object' || data === null || Array.isArray(data))) {
    throw new LoadoutError('CONFIG_INVALID', `${file} is not a JSON object; loadout does not change it`);
  }
  return data;
}

/** The value at `jsonPath` in parsed JSON, if it is there. */
export function valueAt(data: unknown, jsonPath: readonly string[]): unknown {
  let value = data;
  for (const key of jsonPath) {
    if (typeof value !== 'object' || value === null || Array.isArray(value)) return undefined;
    value = (value as Record<string, unknown>)[key];
  }
  return value;
}

/** `text` with `value` set at `jsonPath` (undefined removes it), in the file's own formatting. */
export function setJsonValue(text: string, jsonPath: readonly string[], value: unknown): string {
  if (value === undefined) return removeProperty(text, jsonPath);
  const { modify, applyEdits } = jsoncParser();
  const base = text.trim() === '' ? '{}\n' : text;
  // A file written on one line (as some clients save it) gets the value unformatted, on that line.
  const oneLine = !base.trim().includes('\n');
  const edits = modify(base, [...jsonPath], value, oneLine ? {} : { formattingOptions: formattingOf(base) });
  return applyEdits(base, edits);
}

// jsonc-parser's own removal of a first property also takes the comments up to the next one;
// this takes the property and its comma only (and its line, when nothing else is on it).
function removeProperty(text: string, jsonPath: readonly string[]): string {
  const { parseTree, findNodeAtLocation, createScanner, SyntaxKind } = jsoncParser();
  const property = findNodeAtLocation(parseTree(text, [], { allowTrailingComma: true })!, [...jsonPath])?.parent;
  if (!property || property.type !== 'property') return text;
  const siblings = property.parent!.children!;
  const index = siblings.indexOf(property);
  let start = property.offset;
  let end = property.offset + property.length;
  const afterValue = /^[ \t]*,/.exec(text.slice(end));
  let commaBefore: number | undefined;
  if (afterValue) end += afterValue[0].length;
  else if (index > 0) {
    // The last property goes: the comma after the one before it goes too.
    const previousEnd = siblings[index - 1]!.offset + siblings[index - 1]!.length;
    const scanner = createScanner(text.slice(previousEnd, start), false);
    for (let token = scanner.scan(); token !== SyntaxKind.EOF; token = scanner.scan()) {
      if (token === SyntaxKind.CommaToken) commaBefore = previousEnd + scanner.getTokenOffset();
    }
  }
  const lineStart = text.lastIndexOf('\n', start - 1) + 1;
  const lineEnd = /^[ \t]*(\r?\n|$)/.exec(text.slice(end));
  if (/^[ \t]*$/.test(text.slice(lineStart, start)) && lineEnd) {
    start = lineStart;
    end += lineEnd[0].length;
  }
  const removed = text.slice(0, start) + text.slice(end);
  return commaBefore === undefined ? removed : removed.slice(0, commaBefore) + removed.slice(commaBefore + 1);
}

// Indent and line ends as the file already has them, so an edit looks like the rest of the file.
function formattingOf(text: string): JsoncParser.FormattingOptions {
  const indent = /^([ \t]+)"/m.exec(text)?.[1] ?? '  ';
  return {
    insertSpaces: !indent.startsWith('\t'),
    tabSize: indent.startsWith('\t') ? 1 : indent.length,
    eol: text.includes('\r\n') ? '\r\n' : '\n',
  };
}

/**
 * Replace `file` with `next` if it still holds `expected` (undefined: still absent). The check is
 * repeated right before the rename, so a client that rewrote the file meanwhile keeps its version.
 */
export async function writeIfUnchanged(file: string, expected: string | undefined, next: string): Promise<void> {
  await assertUnchanged(file, expected);
  await mkdir(path.dirname(file), { recursive: true });
  const temp = `${file}.loadout-${randomBytes(4).toString('hex')}.tmp`;
  try {
    await writeFile(temp, next, { encoding: 'utf8', flag: 'wx' });
    // ~/.claude.json may hold tokens and be private (0600): keep the file's mode.
    const mode = expected === undefined ? undefined : (await stat(file)).mode & 0o777;
    if (mode !== undefined) await chmod(temp, mode);
    await assertUnchanged(file, expected);
    await rename(temp, file);
  } finally {
    await rm(temp, { force: true });
  }
}

async function assertUnchanged(file: string, expected: string | undefined): Promise<void> {
  const current = await readTextIfExists(file);
  if (current !== expected) {
    throw new LoadoutError(
      'CONFIG_CHANGED',
      `${file} changed while loadout was preparing its edit (another program wrote it); nothing was written to it. Run the command again`,
    );
  }
}
