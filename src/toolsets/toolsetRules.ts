// What a saved toolset may be, wherever it is kept: its name (valid, and not the built-in one),
// its contents checked for saving, and the one-line errors for both.
import { ToolsetNameSchema, ToolsetSchema, type Toolset } from '../config/index.js';
import { LoadoutError, firstIssue, firstIssueText } from '../shared/index.js';

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
  /**
   * Create or overwrite a toolset; resolves once it is kept. `check` is asked of the toolset kept
   * under its name as the write runs (under its file's lock, or again after a concurrent write):
   * a throw refuses the save, and nothing is written.
   */
  save(toolset: Toolset, check?: (kept: Toolset | undefined) => void): Promise<void>;
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
