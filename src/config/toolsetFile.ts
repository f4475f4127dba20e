// The format of a saved toolset, `<config dir>/toolsets/<name>.yaml`: how its text is read (the
// name inside must match the file's) and written, declared once for the toolsets layer that saves
// them and the store that moves them.
import { LoadoutError, yamlModule } from '../shared/index.js';
import { ToolsetSchema, type Toolset } from './schema.js';
import { parseYamlFile } from './yamlFile.js';

/** The toolset in `text` (of `file`, saved under `expectedName`); TOOLSET_INVALID names the file and line. */
export function parseToolsetFile(text: string, file: string, expectedName: string): Toolset {
  const { data } = parseYamlFile(text, file, ToolsetSchema, 'TOOLSET_INVALID');
  if (data.name !== expectedName) {
    throw new LoadoutError('TOOLSET_INVALID', `${file}: name '${data.name}' does not match the file name '${expectedName}.yaml'`);
  }
  return data;
}

/** The body a valid toolset is saved as, keys in file order: what its file holds. */
export function toolsetFileBody(toolset: Toolset): Record<string, unknown> {
  const body: Record<string, unknown> = { name: toolset.name };
  if (toolset.owner) body.owner = { id: toolset.owner.id, subject: toolset.owner.subject };
  if (toolset.description) body.description = toolset.description;
  body.tools = toolset.tools;
  // Only hand-written files have prompts: kept when such a toolset is written back.
  if (toolset.prompts) body.prompts = toolset.prompts;
  return body;
}

/** The text of a toolset file, as loadout writes it. */
export function toolsetFileText(toolset: Toolset): string {
  return yamlModule().stringify(toolsetFileBody(toolset), { lineWidth: 0 });
}
