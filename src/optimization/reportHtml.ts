// The optimization report as one self-contained HTML page: inline CSS, before/after bars per
// category drawn with plain divs; no scripts, fonts or CDN, so it opens anywhere offline.
import type { Metrics } from '../config/index.js';
import type { OptimizationReport, ToolReport } from './report.js';
import { percent, points } from './percent.js';

const CATEGORIES: ReadonlyArray<[string, keyof Metrics]> = [
  ['Direct', 'directSuccess'],
  ['Indirect', 'indirectSuccess'],
  ['Negative', 'negativeSuccess'],
  ['Overall', 'overall'],
];

const STYLE = `body{font:14px/1.4 system-ui,sans-serif;margin:2rem;color:#222}h1{font-size:1.4rem}h2{font-size:1.15rem;margin-top:2rem}
.tool{border:1px solid #ddd;border-radius:6px;padding:.8rem 1rem;margin:.8rem 0}.status{font-weight:600}.optimized{color:#0a7d32}.baseline{color:#8a6d00}.unoptimized{color:#777}
.row{display:grid;grid-template-columns:6rem 1fr 4rem;gap:.5rem;align-items:center;margin:.15rem 0}.track{background:#eee;border-radius:3px;height:.7rem;position:relative}
.bar{height:100%;border-radius:3px}.before{background:#9aa7b8}.after{background:#2f7de1}.desc{color:#555;font-size:.9rem;margin:.3rem 0}`;

/** Render reports as a complete HTML document. */
export function renderReportHtml(reports: readonly OptimizationReport[], generatedAt = new Date()): string {
  const body = reports.length ? reports.map(serverSection).join('\n') : '<p>No optimization data yet.</p>';
  return `<!doctype html>
<html lang="en"><head><meta charset="utf-8"><title>loadout optimization report</title><style>${STYLE}</style></head>
<body><h1>loadout — tool-description optimization</h1><p>Generated ${escapeHtml(generatedAt.toISOString())}. Grey: canonical baseline; blue: promoted description.</p>
${body}
</body></html>
`;
}

function serverSection(report: OptimizationReport): string {
  const gain = report.avgImprovement === null ? '' : `, average gain ${points(report.avgImprovement, { signed: true })}`;
  return `<h2>${escapeHtml(report.serverName)}</h2><p>${report.optimizedCount}/${report.toolCount} tools optimized, ${report.totalEvals} evaluation runs${gain}.</p>\n${report.tools.map(toolSection).join('\n')}`;
}

function toolSection(tool: ToolReport): string {
  const rows =
    tool.before || tool.after
      ? CATEGORIES.map(([label, key]) => barRows(label, tool.before?.[key] ?? null, tool.after?.[key] ?? null)).join('')
      : '';
  const descriptions = tool.description
    ? `<p class="desc">Before: ${escapeHtml(tool.canonicalDescription ?? '')}</p><p class="desc">After: ${escapeHtml(tool.description)}</p>`
    : '';
  return `<div class="tool"><div><strong>${escapeHtml(tool.name)}</strong> — <span class="status ${tool.status}">${tool.status}</span> (${tool.candidateCount} candidates, ${tool.promptCount} prompts)</div>${descriptions}${rows}</div>`;
}

function barRows(label: string, before: number | null, after: number | null): string {
  return `<div class="row"><span>${label}</span><div>${bar('before', before)}${bar('after', after)}</div><span>${percent(before)} → ${percent(after)}</span></div>`;
}

function bar(kind: string, value: number | null): string {
  const width = value === null ? 0 : Math.round(value * 100);
  return `<div class="track" title="${kind}"><div class="bar ${kind}" style="width:${width}%"></div></div>`;
}

function escapeHtml(text: string): string {
  return text.replace(/[&<>"']/g, (c) => `&#${c.charCodeAt(0)};`);
}
