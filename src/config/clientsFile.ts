// The format of `<data dir>/clients.json`: what loadout learned of each MCP client across its
// sessions, by the name and version the client gives at initialize (the gateway's relistHabit.ts
// reads and writes it through the store's `clients` kind, a table in store mode). A file that
// cannot be read is none: the worst outcome is one re-list hold paid again.
import * as z from 'zod';

/** What one client was seen to do after a tools list_changed. */
export const ClientRecordSchema = z.strictObject({
  /** Re-reads tools/list at once, only after the equip answer it waits for, or not at all. */
  relist: z.enum(['relists', 'relists-after-answer', 'never']),
  learnedAt: z.iso.datetime(),
});
export type ClientRecord = z.infer<typeof ClientRecordSchema>;

const ClientsFileSchema = z.strictObject({ version: z.literal(1), clients: z.record(z.string(), ClientRecordSchema) });

/** The records of a clients.json text by client key; a missing or unreadable file is none. */
export function parseClientsFile(text: string | undefined): Record<string, ClientRecord> {
  if (text === undefined) return {};
  try {
    const parsed = ClientsFileSchema.safeParse(JSON.parse(text));
    return parsed.success ? { ...parsed.data.clients } : {};
  } catch {
    return {};
  }
}

/** The text of clients.json holding `clients`, as loadout writes it. */
export function clientsFileText(clients: Readonly<Record<string, ClientRecord>>): string {
  return `${JSON.stringify({ version: 1, clients }, null, 2)}\n`;
}
