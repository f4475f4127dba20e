// Saved toolsets: one YAML file per toolset in `<config dir>/toolsets/`. Files are read fresh on
// every use, so a toolset saved by another loadout process (or by hand, or by git) is seen at once.
import { readdir, rm } from 'node:fs/promises';
import path from 'node:path';
import {
  ToolsetNameSchema,
  ToolsetSchema,
  parseToolsetFile,
  readTextIfExists,
  toolsetFileBody,
  toolsetFileText,
  updateTextFile,
  withFileLock,
  type Toolset,
} from '../config/index.js';
import { LoadoutError, errorMessage, firstIssue, firstIssueText } from '../shared/index.js';

/** The built-in toolset that exposes every enabled tool; no toolset file may take its name. */
export const ALL_TOOLSET = 'all';

/** `name` if it is a valid toolset name, else TOOLSET_INVALID saying why. */
export function toolsetName(name: string): string {
  const parsed = ToolsetNameSchema.safeParse(name);
  if (!parsed.success) throw new LoadoutError('TOOLSET_INVALID', `Invalid toolset name '${name}': ${firstIssueText(parsed.error)}`);
  return parsed.data;
}

/** `name` if a toolset file may be saved or deleted under it: valid, and not the built-in one. */
export function writableToolsetName(name: string, action: 'save' | 'delete'): string {
  const valid = toolsetName(name);
  if (valid !== ALL_TOOLSET) return valid;
  throw new LoadoutError(
    'TOOLSET_INVALID',
    action === 'save'
      ? `'${ALL_TOOLSET}' is reserved (equipping it exposes every enabled tool); choose another name`
      : `'${ALL_TOOLSET}' is built in and cannot be deleted`,
  );
}

/** A saved toolset that could not be read (`file`: its file, or where the store keeps it). */
export interface ToolsetProblem {
  file: string;
  error: string;
}

/** Where saved toolsets are kept: a folder of YAML files (ToolsetStore) or the team store (StoredToolsets). */
export interface Toolsets {
  /** Every readable saved toolset, sorted by name, plus the ones that could not be read. */
  list(): Promise<{ toolsets: Toolset[]; problems: ToolsetProblem[] }>;
  /** One saved toolset; TOOLSET_NOT_FOUND lists the saved ones (or, with none, asks for one to be created). */
  get(name: string): Promise<Toolset>;
  /** Create or overwrite a toolset; resolves once it is kept. */
  save(toolset: Toolset): Promise<void>;
  /** Remove a toolset; false when there was none. */
  delete(name: string): Promise<boolean>;
}

/** `toolset` checked for saving (a writable name, valid tools), or TOOLSET_INVALID in one readable line. */
export function validToolset(toolset: Toolset): Toolset {
  const parsed = ToolsetSchema.safeParse({ ...toolset, name: writableToolsetName(toolset.name, 'save') });
  if (parsed.success) return parsed.data;
  // One readable line, never a raw zod dump: the first issue and where it is.
  const { path, message } = firstIssue(parsed.error);
  const [field, index] = parsed.error.issues[0]?.path ?? [];
  const value = field === 'tools' ? `: '${String(toolset.tools[Number(index)])}'` : '';
  throw new LoadoutError(
    'TOOLSET_INVALID',
    `Toolset '${toolset.name}' not saved: ${message}${path === '(root)' ? '' : ` (${path}${value})`}`,
  );
}

/** TOOLSET_NOT_FOUND for `name`, listing the `saved` ones (or, with none, asking for one to be created). */
export function toolsetNotFound(name: string, saved: readonly Toolset[]): LoadoutError {
  if (!saved.length)
    return new LoadoutError('TOOLSET_NOT_FOUND', `Toolset '${name}' not found; no toolsets are saved yet`, { remedy: 'create-toolset' });
  return new LoadoutError('TOOLSET_NOT_FOUND', `Toolset '${name}' not found; saved toolsets: ${saved.map((t) => t.name).join(', ')}`);
}

/** Reads and writes toolset files. */
export class ToolsetStore implements Toolsets {
  readonly #dir: string;
  // The last parse of each file with the exact text it came from. Files are still read on every
  // use; only an unchanged text skips YAML parsing and validation (~10 ms for 1,000 tools).
  readonly #parsed = new Map<string, { text: string; toolset: Toolset }>();

  constructor(dir: string) {
    this.#dir = dir;
  }

  /** The folder toolsets live in. */
  get dir(): string {
    return this.#dir;
  }

  /** Every readable saved toolset, sorted by name, plus the files that could not be read. */
  async list(): Promise<{ toolsets: Toolset[]; problems: ToolsetProblem[] }> {
    let entries: string[];
    try {
      entries = await readdir(this.#dir);
    } catch (error) {
      if ((error as NodeJS.ErrnoException).code === 'ENOENT') return { toolsets: [], problems: [] };
      throw error;
    }
    const toolsets: Toolset[] = [];
    const problems: ToolsetProblem[] = [];
    for (const entry of entries.filter((name) => name.endsWith('.yaml')).sort()) {
      const file = path.join(this.#dir, entry);
      try {
        const toolset = await this.#read(file, entry.slice(0, -'.yaml'.length));
        if (toolset) toolsets.push(toolset);
      } catch (error) {
        problems.push({ file, error: errorMessage(error) });
      }
    }
    return { toolsets, problems };
  }

  /** One saved toolset; TOOLSET_NOT_FOUND lists the saved ones (or, with none, asks for one to be created). */
  async get(name: string): Promise<Toolset> {
    const file = this.#fileOf(name);
    const toolset = await this.#read(file, name);
    if (toolset) return toolset;
    throw toolsetNotFound(name, (await this.list()).toolsets);
  }

  /** Create or overwrite a toolset file (atomic, under the inter-process lock). */
  async save(toolset: Toolset): Promise<void> {
    const valid = validToolset(toolset);
    const file = this.#fileOf(valid.name);
    const text = toolsetFileText(valid);
    await updateTextFile(file, () => text);
    // build-toolset equips right after saving: its re-read then needs no parse.
    this.#remember(file, text, ToolsetSchema.parse(toolsetFileBody(valid)));
  }

  /** Remove a toolset file; false when there was none. */
  async delete(name: string): Promise<boolean> {
    const file = this.#fileOf(writableToolsetName(name, 'delete'));
    return withFileLock(file, async () => {
      if ((await readTextIfExists(file)) === undefined) return false;
      this.#parsed.delete(file);
      await rm(file);
      return true;
    });
  }

  #fileOf(name: string): string {
    return path.join(this.#dir, `${toolsetName(name)}.yaml`);
  }

  async #read(file: string, expectedName: string): Promise<Toolset | undefined> {
    const text = await readTextIfExists(file);
    if (text === undefined) return undefined;
    const cached = this.#parsed.get(file);
    if (cached?.text === text) return cached.toolset;
    return this.#remember(file, text, parseToolsetFile(text, file, expectedName));
  }

  #remember(file: string, text: string, toolset: Toolset): Toolset {
    // Frozen because every later reader of this file shares the object.
    const frozen = Object.freeze({ ...toolset, tools: Object.freeze([...toolset.tools]) as string[] });
    this.#parsed.set(file, { text, toolset: frozen });
    return frozen;
  }
}
