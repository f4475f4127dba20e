// Text for one-line displays: error details, table cells, tool summaries.

/** `text` with its whitespace runs collapsed to single spaces, cut to `maxChars` with "…" when longer. */
export function oneLine(text: string, maxChars: number): string {
  const line = text.replace(/\s+/g, ' ').trim();
  return line.length > maxChars ? `${line.slice(0, maxChars - 1)}…` : line;
}
