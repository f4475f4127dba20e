// How rates (fractions from 0 to 1) read in promotion verdicts, the CLI's tables and the HTML report.

/** A rate as a whole percentage ("87%"), or "–" when nothing was measured. */
export function percent(rate: number | null): string {
  return rate === null ? '–' : `${Math.round(rate * 100)}%`;
}

/** A difference of two rates in percentage points: "12 points", or signed: "+12 points", "-5 points". */
export function points(difference: number, options: { signed?: boolean } = {}): string {
  return `${options.signed && difference >= 0 ? '+' : ''}${Math.round(difference * 100)} points`;
}
