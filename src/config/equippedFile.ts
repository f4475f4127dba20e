// The format of an equipped set on file: `<data dir>/principals/<id>.json`, what one principal has
// equipped, declared once for the gateway that serves it and the store that moves it.
import * as z from 'zod';
import { ToolsetNameSchema } from './schema.js';

/** A principal's equipped set: a toolset's name, or none. */
export const EquippedRecordSchema = z.strictObject({ toolset: ToolsetNameSchema.nullable() });
export type EquippedRecord = z.infer<typeof EquippedRecordSchema>;

/** The text of a principal's file, as loadout writes it. */
export function equippedFileText(record: EquippedRecord): string {
  return `${JSON.stringify({ toolset: record.toolset })}\n`;
}
