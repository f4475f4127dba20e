// What a toolset may be called: its name doubles as a file name, and servers.yaml's policy names
// toolsets too, so the rule lives apart from both schemas that use it.
import * as z from 'zod';

/** Toolset names double as file names, so they are restricted to a path-safe alphabet. */
export const ToolsetNameSchema = z
  .string()
  .regex(/^[a-z0-9][a-z0-9_-]{0,63}$/, 'toolset names use a-z, 0-9, "_" and "-" (at most 64), starting with a letter or digit');
