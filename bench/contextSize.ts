// Row 6: what the tool list costs the agent's context: a catalog's servers connected directly
// against loadout with nothing equipped (meta-tools only, plus the session's instructions with
// their map of the servers), for a demo-like catalog of real servers (the echo fixture,
// server-memory, server-filesystem, discovered live) and for a generated 100-tool catalog. The
// figures also go to bench/context-size.json and the README's table (contextFigures.ts).
import { measureContextFigures, tokens, writeContextFigures, type ContextFigures } from './contextFigures.js';
import type { BenchRow } from './report.js';
import { formatBytes } from './stats.js';

const REDUCTION_TARGET = 0.9;

/** Rows 6a–6b. */
export async function benchContextSize(): Promise<BenchRow[]> {
  const figures = await measureContextFigures();
  await writeContextFigures(figures);
  return [sizeRow('6a', figures.demo, undefined), sizeRow('6b', figures.hundred, REDUCTION_TARGET)];
}

function sizeRow(id: string, figures: ContextFigures, target: number | undefined): BenchRow {
  const reduction = 1 - figures.idleBytes / figures.directBytes;
  return {
    id,
    figure: `context size, direct vs loadout idle: ${figures.catalog}, ${figures.tools} tools`,
    loadout: `idle ${formatBytes(figures.idleBytes)} ≈ ${tokens(figures.idleBytes)} tok (meta-tools ${formatBytes(figures.metaToolsBytes)} + instructions ${formatBytes(figures.instructionsBytes)})`,
    limit: `direct ${formatBytes(figures.directBytes)} ≈ ${tokens(figures.directBytes)} tok (all equipped: ${formatBytes(figures.allBytes)})`,
    ratio: figures.idleBytes / figures.directBytes,
    target: target === undefined ? `— (${percent(reduction)} smaller)` : `≥ ${percent(target)} smaller (${percent(reduction)})`,
    pass: target === undefined ? undefined : reduction >= target,
    values: {
      directBytes: figures.directBytes,
      idleBytes: figures.idleBytes,
      metaToolsBytes: figures.metaToolsBytes,
      instructionsBytes: figures.instructionsBytes,
      allBytes: figures.allBytes,
      catalogTools: figures.tools,
      idleTokens: tokens(figures.idleBytes),
      directTokens: tokens(figures.directBytes),
      reduction,
    },
  };
}

function percent(fraction: number): string {
  return `${Math.round(fraction * 1000) / 10} %`;
}
