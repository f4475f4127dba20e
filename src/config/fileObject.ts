// Strict objects for the files users edit (servers.yaml, toolset files): a key the schema does not
// know is reported as a typo, with the closest known key, and ahead of the issues the typo causes
// (`comand:` also leaves `command` missing). Knows nothing of YAML positions; the readers add them.
import * as z from 'zod';

/** `z.strictObject(shape)` whose unknown-key issue reads "unknown key 'comand' (did you mean 'command'?)". */
export function fileObject<Shape extends z.core.$ZodLooseShape>(shape: Shape) {
  const known = Object.keys(shape);
  return z.strictObject(shape, {
    error: (issue) => (issue.code === 'unrecognized_keys' ? unknownKeysMessage(issue.keys, known) : undefined),
  });
}

/** The issue to report of a file's schema errors: an unknown key first, as it usually explains the rest. */
export function reportedIssue(issues: readonly z.core.$ZodIssue[]): z.core.$ZodIssue | undefined {
  return issues.find((issue) => issue.code === 'unrecognized_keys') ?? issues[0];
}

function unknownKeysMessage(keys: readonly string[], known: readonly string[]): string {
  return keys
    .map((key) => {
      const close = closestKey(key, known);
      return `unknown key '${key}'${close ? ` (did you mean '${close}'?)` : ''}`;
    })
    .join('; ');
}

// A known key one or two edits away (a third for long keys), or one the typed key begins.
function closestKey(key: string, known: readonly string[]): string | undefined {
  const limit = Math.max(2, Math.floor(key.length / 4));
  let best: { name: string; distance: number } | undefined;
  for (const name of known) {
    const distance = name.startsWith(key) && key.length >= 4 ? 1 : editDistance(key.toLowerCase(), name.toLowerCase());
    if (distance <= limit && (!best || distance < best.distance)) best = { name, distance };
  }
  return best?.name;
}

// Optimal string alignment distance: insertions, deletions, substitutions and swaps of neighbours.
function editDistance(a: string, b: string): number {
  const rows = Array.from({ length: a.length + 1 }, (_, i) =>
    Array.from({ length: b.length + 1 }, (_, j) => (i === 0 ? j : j === 0 ? i : 0)),
  );
  for (let i = 1; i <= a.length; i++) {
    for (let j = 1; j <= b.length; j++) {
      const cost = a[i - 1] === b[j - 1] ? 0 : 1;
      let distance = Math.min(rows[i - 1]![j]! + 1, rows[i]![j - 1]! + 1, rows[i - 1]![j - 1]! + cost);
      if (i > 1 && j > 1 && a[i - 1] === b[j - 2] && a[i - 2] === b[j - 1]) distance = Math.min(distance, rows[i - 2]![j - 2]! + 1);
      rows[i]![j] = distance;
    }
  }
  return rows[a.length]![b.length]!;
}
