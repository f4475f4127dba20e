// The first problem zod found, for the one-line errors loadout prints about a bad file or argument.
import type { ZodError } from 'zod';

/** Where the first issue is (`a.b.0`, or "(root)" for the value itself) and what it says. */
export function firstIssue(error: ZodError): { path: string; message: string } {
  const issue = error.issues[0];
  if (!issue) return { path: '(root)', message: error.message };
  return { path: issue.path.map(String).join('.') || '(root)', message: issue.message };
}

/** The first issue as "message at path" ("message" alone when it is about the value itself). */
export function firstIssueText(error: ZodError): string {
  return issueText(error.issues[0] ?? { message: error.message, path: [] });
}

/** One issue as "message at path" ("message" alone when it is about the value itself). */
export function issueText(issue: { message: string; path: readonly PropertyKey[] }): string {
  return issue.path.length ? `${issue.message} at ${issue.path.map(String).join('.')}` : issue.message;
}
