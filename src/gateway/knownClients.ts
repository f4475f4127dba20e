// What loadout knows of particular MCP clients before they show it, by the name they give at
// initialize (clientInfo.name): one table, asked by how answers are spelt (clientSpelling.ts) and
// by whether an equip answer waits for a re-read (relistHabit.ts). Measured behaviour is in
// docs/clients.md. A client that re-lists at once (Claude Code, opencode) needs no entry: it is
// held for until it shows otherwise.

/** How a known client re-reads tools/list after a tools list_changed (see RelistHabit). */
interface KnownRelist {
  readonly habit: 'relists' | 'relists-after-answer' | 'never';
  /**
   * How long after its re-read the client needs before its next model request carries the new list
   * (measured with Gemini CLI 0.61.0 on a loaded machine: 100 ms was sometimes too short, 250 ms
   * always enough).
   */
  readonly settleMs?: number;
}

/** One known client. */
interface KnownClient {
  readonly name: RegExp;
  /** Its model sees each `-` in a tool name as `_` (the client maps the names back when it calls). */
  readonly spellsDashAsUnderscore: boolean;
  readonly relist?: KnownRelist;
}

const KNOWN_CLIENTS: readonly KnownClient[] = [
  // Codex CLI: re-lists only with its list-change flag on, and then after the answer has arrived.
  { name: /codex/i, spellsDashAsUnderscore: true, relist: { habit: 'relists-after-answer' } },
  // Gemini CLI: re-lists at once, but folds the new list into the conversation a little later.
  { name: /gemini/i, spellsDashAsUnderscore: false, relist: { habit: 'relists', settleMs: 250 } },
  // Qwen Code 0.24 (`qwen-cli-mcp-client-<entry key>`): registers no list_changed handler, and every `qwen -p` is a new session.
  { name: /^qwen-cli-mcp-client/i, spellsDashAsUnderscore: false, relist: { habit: 'never' } },
];

/** What is known of the client that calls itself `clientName`, if anything. */
export function knownClient(clientName: string | undefined): KnownClient | undefined {
  return clientName === undefined ? undefined : KNOWN_CLIENTS.find((client) => client.name.test(clientName));
}
