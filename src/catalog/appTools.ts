// What the MCP Apps extension (io.modelcontextprotocol/ui, SEP-1865) says of a tool, read from its
// `_meta.ui` as the server listed it: the View a UI tool opens (`resourceUri`) and who may call it
// (`visibility`: "model", "app", both when absent). Read only: a definition passes on unchanged.
import type { Tool } from '@modelcontextprotocol/server';

/** The extension's id, as a client declares it under `capabilities.extensions`. */
export const APPS_EXTENSION = 'io.modelcontextprotocol/ui';

// The flat key the extension's first drafts used, which servers still send beside `ui.resourceUri`.
const LEGACY_RESOURCE_URI = 'ui/resourceUri';

interface UiMeta {
  readonly resourceUri?: unknown;
  readonly visibility?: unknown;
}

function uiMetaOf(definition: Pick<Tool, '_meta'>): UiMeta | undefined {
  const ui = definition._meta?.ui;
  return typeof ui === 'object' && ui !== null ? ui : undefined;
}

/** The `ui://` resource a UI tool's View is, or undefined for a tool that opens none. */
export function uiResourceUriOf(definition: Pick<Tool, '_meta'>): string | undefined {
  const uri = uiMetaOf(definition)?.resourceUri ?? definition._meta?.[LEGACY_RESOURCE_URI];
  return typeof uri === 'string' && isUiUri(uri) ? uri : undefined;
}

/** A definition whose View is `exposedUri` instead (a `ui://` URI two servers share is disambiguated: resourceUris.ts). */
export function withUiResourceUri(definition: Tool, exposedUri: string): Tool {
  const meta = definition._meta ?? {};
  const ui = uiMetaOf(definition);
  return {
    ...definition,
    _meta: {
      ...meta,
      ...(ui?.resourceUri !== undefined ? { ui: { ...ui, resourceUri: exposedUri } } : {}),
      ...(meta[LEGACY_RESOURCE_URI] !== undefined ? { [LEGACY_RESOURCE_URI]: exposedUri } : {}),
    },
  };
}

function visibilityOf(definition: Pick<Tool, '_meta'>): readonly unknown[] | undefined {
  const visibility = uiMetaOf(definition)?.visibility;
  return Array.isArray(visibility) ? visibility : undefined;
}

/** Whether only an App's View may call the tool (its visibility leaves the model out): never offered to the model. */
export function isAppOnly(definition: Pick<Tool, '_meta'>): boolean {
  const visibility = visibilityOf(definition);
  return visibility !== undefined && !visibility.includes('model');
}

/** Why an App's own tool is not offered or equipped on its own, in the words every refusal uses. */
export const APP_ONLY_REASON = "an App's own tool (visibility app): it comes with its server's UI tool";

/** Whether a View may call the tool: its visibility names `app`, or it gives none. */
export function isAppCallable(definition: Pick<Tool, '_meta'>): boolean {
  const visibility = visibilityOf(definition);
  return visibility === undefined || visibility.includes('app');
}

/** Whether `uri` is an App's View (the `ui` scheme). */
export function isUiUri(uri: string): boolean {
  return uri.startsWith('ui://');
}
