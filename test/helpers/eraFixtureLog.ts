// What the era fixture (test/fixtures/eraServer.ts) logged with --log: one line per message it
// received, so a test can see which era loadout spoke to it and which probes it sent.
import { readFile } from 'node:fs/promises';

/** One message the era fixture received. */
export interface LoggedMessage {
  pid: number;
  /** The JSON-RPC method (HTTP: the Mcp-Method header, null when there was none). */
  method: string | null;
  /** Over stdio: whether the message carried the 2026-07-28 envelope. */
  modern?: boolean;
  /** Over HTTP: the request's HTTP method. */
  http?: string;
}

/** Every message logged to `file` so far, in order (none before the file exists). */
export async function eraFixtureLog(file: string): Promise<LoggedMessage[]> {
  const text = await readFile(file, 'utf8').catch(() => '');
  return text
    .split('\n')
    .filter(Boolean)
    .map((line) => JSON.parse(line) as LoggedMessage);
}
