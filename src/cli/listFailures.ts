// What the CLI says about a server that started but failed a list, in one wording for refresh,
// status and doctor: what is missing, and what to do about it.
import { isUnimplementedList, type ListFailures, type OptionalList } from '../downstream/index.js';

/** The fix for a server that started but failed a list: the fault is in it, or in what it depends on. */
export function checkServerFix(server: string): string {
  return `check the server (its own log, what it depends on), then run loadout refresh ${server}`;
}

const LIST_LABELS: Record<OptionalList, string> = { prompts: 'prompts', resources: 'resources', resourceTemplates: 'resource templates' };

/**
 * What to say of each optional list (prompts, resources, templates) the server declared but
 * answered with an error: its tools work, that list is missing.
 */
export function listFailureWords(server: string, failures: ListFailures | undefined): Array<{ message: string; fix: string }> {
  return Object.entries(failures ?? {}).map(([list, failure]) => ({
    message: `${failure.text}; its tools work, its ${LIST_LABELS[list as OptionalList]} are not offered`,
    // Only the server's authors can implement a list it declares.
    fix: isUnimplementedList(failure)
      ? 'none in loadout: the server declares a list it does not serve (report it to its authors)'
      : checkServerFix(server),
  }));
}

/** One line per optional list a server failed to answer (refresh, status), as doctor words it. */
export function listFailureLines(server: string, failures: ListFailures | undefined): string[] {
  return listFailureWords(server, failures).map(({ message, fix }) => `${server}: ${message} — fix: ${fix}`);
}
