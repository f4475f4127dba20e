// How a client shows loadout's tool names to its model. Codex CLI spells every `-` as `_`
// (discover_all_tools, call_tool) and maps the names back when it calls, so the tools work; but
// answers that say `call-tool` would name a tool its model does not see. Answers to such a client
// name the meta-tools as its model sees them. The session's instructions, sent before the client
// is known, say both spellings are the same tools (catalogMap.ts).
import { knownClient } from './knownClients.js';

/** `text` with each of `names` spelt as the client `clientName` shows it to its model. */
export function spellForClient(text: string, clientName: string | undefined, names: Iterable<string>): string {
  if (!knownClient(clientName)?.spellsDashAsUnderscore) return text;
  let spelt = text;
  for (const name of names) if (name.includes('-')) spelt = spelt.replaceAll(name, name.replaceAll('-', '_'));
  return spelt;
}
