// Saved toolsets as one identified caller (a static token's or an issuer's principal) may have
// them: its own (it saved them), those for everyone (no owner: hand-written files, or saved over
// stdio or by the CLI) and those a policy rule grants it. Nothing else is listed, equipped, changed
// or deleted, and no answer names one: a toolset it may not see is "not found", listing only its own.
import type { Toolset, ToolsetOwner } from '../config/index.js';
import { LoadoutError, isLoadoutError } from '../shared/index.js';
import { toolsetName, toolsetNotFound, validToolset, writableToolsetName, type ToolsetProblem, type Toolsets } from './toolsetRules.js';

/** Who is asking: the owner its saves are recorded under, and which toolsets a policy rule grants it. */
export interface ToolsetViewer {
  readonly owner: ToolsetOwner;
  /** Whether a policy rule grants the toolset `name` to this caller (asked on every use: the policy may change). */
  granted(name: string): boolean;
}

/** Whether `viewer` may list and equip `toolset`. */
export function seesToolset(viewer: ToolsetViewer, toolset: Toolset): boolean {
  return !toolset.owner || toolset.owner.id === viewer.owner.id || viewer.granted(toolset.name);
}

/** The saved toolsets of `all` as `viewer` may have them. */
export class OwnedToolsets implements Toolsets {
  readonly #all: Toolsets;
  readonly #viewer: ToolsetViewer;

  constructor(all: Toolsets, viewer: ToolsetViewer) {
    this.#all = all;
    this.#viewer = viewer;
  }

  /**
   * The toolsets it may see. Unreadable files are not among the problems: a file's name is a
   * toolset's, maybe another caller's (the operator sees them in the CLI and the log).
   */
  async list(): Promise<{ toolsets: Toolset[]; problems: ToolsetProblem[] }> {
    const { toolsets } = await this.#all.list();
    return { toolsets: toolsets.filter((toolset) => seesToolset(this.#viewer, toolset)), problems: [] };
  }

  async get(name: string): Promise<Toolset> {
    const toolset = await this.#visible(toolsetName(name));
    if (toolset) return toolset;
    throw toolsetNotFound(name, (await this.list()).toolsets);
  }

  /** Saved as this caller's own: a new name, or one it owns already; another's, or one for everyone, is refused. */
  async save(toolset: Toolset): Promise<void> {
    const valid = validToolset(toolset);
    // Decided in the write itself: of two callers saving a new name at once, one gets it.
    await this.#all.save({ ...valid, owner: this.#viewer.owner }, (kept) => {
      if (kept && kept.owner?.id !== this.#viewer.owner.id) throw notYours(valid.name, seesToolset(this.#viewer, kept) ? 'save' : 'taken');
    });
  }

  async delete(name: string): Promise<boolean> {
    const kept = await this.#kept(writableToolsetName(name, 'delete'));
    if (!kept || !seesToolset(this.#viewer, kept)) return false;
    if (kept.owner?.id !== this.#viewer.owner.id) throw notYours(name, 'delete');
    return this.#all.delete(name);
  }

  async #visible(name: string): Promise<Toolset | undefined> {
    const kept = await this.#kept(name);
    return kept && seesToolset(this.#viewer, kept) ? kept : undefined;
  }

  // The toolset saved under `name`, whoever owns it; undefined when there is none (or its file cannot be read).
  async #kept(name: string): Promise<Toolset | undefined> {
    try {
      return await this.#all.get(name);
    } catch (error) {
      if (isLoadoutError(error, 'TOOLSET_NOT_FOUND')) return undefined;
      throw error;
    }
  }
}

// Another caller's toolset, or one for everyone: it may be used (when seen), not changed. A name
// another caller holds privately is only said to be taken: nothing more of it is told.
function notYours(name: string, action: 'save' | 'delete' | 'taken'): LoadoutError {
  const text = {
    save: `Toolset '${name}' is not yours to change (it is shared with you); save yours under another name`,
    delete: `Toolset '${name}' is not yours to delete (it is shared with you)`,
    taken: `The toolset name '${name}' is taken; choose another`,
  }[action];
  return new LoadoutError('TOOLSET_NOT_OWNED', text);
}
