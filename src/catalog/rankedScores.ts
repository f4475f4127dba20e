// Picking the best entries of one ranking's scores without sorting them all.

/** The most tools each ranking contributes to the fused ranking (and so to a page). */
const MAX_RANKED = 500;

/**
 * The best `MAX_RANKED` tools of one ranking as [tool, score], best first. Ranks below that add
 * under 1/(k + MAX_RANKED) to a fused score, and a full sort of 10k scores per ranking would cost
 * more than the scoring.
 */
export function sortedScores(scores: Float64Array): [number, number][] {
  const positives: number[] = [];
  for (let tool = 0; tool < scores.length; tool++) if (scores[tool]! > 0) positives.push(scores[tool]!);
  const threshold = positives.length > MAX_RANKED ? nthLargest(positives, MAX_RANKED) : Number.MIN_VALUE;
  const top: [number, number][] = [];
  for (let tool = 0; tool < scores.length; tool++) if (scores[tool]! >= threshold) top.push([tool, scores[tool]!]);
  return top.sort((a, b) => b[1] - a[1] || a[0] - b[0]).slice(0, MAX_RANKED);
}

/** The n-th largest value (1-based) by quickselect; reorders `values`. */
function nthLargest(values: number[], n: number): number {
  let low = 0;
  let high = values.length - 1;
  const target = n - 1;
  while (low < high) {
    const pivot = values[(low + high) >> 1]!;
    let i = low;
    let j = high;
    while (i <= j) {
      while (values[i]! > pivot) i++;
      while (values[j]! < pivot) j--;
      if (i <= j) {
        [values[i], values[j]] = [values[j]!, values[i]!];
        i++;
        j--;
      }
    }
    if (target <= j) high = j;
    else if (target >= i) low = i;
    else break;
  }
  return values[target]!;
}
