// Parsing one of our YAML files against its schema, with every failure as one line that names the
// file, line and column: servers.yaml and toolset files read the same way. Reads no files itself.
import type { Document, LineCounter } from 'yaml';
import type * as z from 'zod';
import { LoadoutError, issueText, yamlModule } from '../shared/index.js';
import { reportedIssue } from './fileObject.js';

type InvalidCode = 'CONFIG_INVALID' | 'TOOLSET_INVALID';

/** `text` parsed and validated, with its document (for edits that keep comments). */
export function parseYamlFile<Schema extends z.ZodType>(
  text: string,
  file: string,
  schema: Schema,
  code: InvalidCode,
  /** Entries of this map (e.g. "servers") whose problems drop the entry instead of failing the file. */
  skippable?: string,
): { data: z.output<Schema>; document: Document; skipped: Map<string, string> } {
  const yaml = yamlModule();
  const lineCounter = new yaml.LineCounter();
  const document = yaml.parseDocument(text, { lineCounter, prettyErrors: false });
  const syntaxError = document.errors[0];
  if (syntaxError) {
    const at = lineCounter.linePos(syntaxError.pos[0]);
    throw new LoadoutError(code, `${file}:${at.line}:${at.col}: ${firstLine(syntaxError.message)}`);
  }
  const input: unknown = document.toJS() ?? {};
  const parsed = schema.safeParse(input);
  if (parsed.success) return { data: parsed.data, document, skipped: new Map() };
  const skipped = skippable === undefined ? undefined : skippedEntries(parsed.error, skippable);
  if (!skipped) throw schemaError(parsed.error.issues, document, lineCounter, file, code);
  // Every problem lies inside an entry of the skippable map: the file is read without those entries.
  const entries = { ...((input as Record<string, Record<string, unknown>>)[skippable!] ?? {}) };
  for (const name of skipped.keys()) delete entries[name];
  const rest = schema.safeParse({ ...(input as object), [skippable!]: entries });
  if (!rest.success) throw schemaError(rest.error.issues, document, lineCounter, file, code);
  const problems = new Map(
    [...skipped].map(([name, issues]) => [name, schemaError(issues, document, lineCounter, file, code).message] as const),
  );
  return { data: rest.data, document, skipped: problems };
}

// The issues grouped by the entry of `map` they lie in; undefined if any lies outside every entry.
function skippedEntries(error: z.ZodError, map: string): Map<string, z.core.$ZodIssue[]> | undefined {
  const byEntry = new Map<string, z.core.$ZodIssue[]>();
  for (const issue of error.issues) {
    const [head, name] = issue.path;
    if (head !== map || name === undefined) return undefined;
    byEntry.set(String(name), [...(byEntry.get(String(name)) ?? []), issue]);
  }
  return byEntry;
}

function schemaError(
  issues: readonly z.core.$ZodIssue[],
  document: Document,
  lineCounter: LineCounter,
  file: string,
  code: InvalidCode,
): LoadoutError {
  const issue = reportedIssue(issues)!;
  const issuePath = issue.path.map(String);
  // An unknown key is best shown at the key itself, not at the map that holds it.
  const node =
    (issue.code === 'unrecognized_keys' ? keyNode(document, issuePath, issue.keys[0]) : undefined) ?? deepestNode(document, issuePath);
  const position = node?.range ? lineCounter.linePos(node.range[0]) : { line: 1, col: 1 };
  return new LoadoutError(code, `${file}:${position.line}:${position.col}: ${issueText(issue)}`);
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
