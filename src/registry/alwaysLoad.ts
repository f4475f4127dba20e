// Claude Code's per-tool switch against its tool search: with tool search on, it sends a tool
// listed with `_meta["anthropic/alwaysLoad"]: true` to the model in full, and defers the rest
// behind a search. loadout's own list is small and chosen, so it carries the mark; other clients
// ignore a `_meta` key they do not know.

const ALWAYS_LOAD = 'anthropic/alwaysLoad';

/** `tool` marked as always loaded: a new object, the tool's own `_meta` keys kept in their place. */
export function alwaysLoaded<T extends { _meta?: Record<string, unknown> }>(tool: T): T {
  return { ...tool, _meta: { ...tool._meta, [ALWAYS_LOAD]: true } };
}
