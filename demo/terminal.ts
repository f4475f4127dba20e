// How the demo prints: numbered steps, the call the agent makes, and loadout's answer, kept
// short (long answers are cut) and coloured only on a terminal that wants colour.
const useColour = process.stdout.isTTY && !process.env.NO_COLOR;
const paint = (code: string) => (text: string) => (useColour ? `\x1b[${code}m${text}\x1b[0m` : text);

/** Colours for the demo's output. */
export const style = { bold: paint('1'), dim: paint('2'), cyan: paint('36'), green: paint('32'), yellow: paint('33'), red: paint('31') };

const WIDTH = Math.min(process.stdout.columns || 100, 110);
let stepNumber = 0;

/** Print a line of output. */
export function say(text = ''): void {
  console.log(text);
}

/** Start a numbered step. */
export function step(title: string, explanation: string): void {
  stepNumber += 1;
  say();
  say(`${style.bold(style.cyan(`${stepNumber}. ${title}`))}  ${style.dim(explanation)}`);
}

/** The call the agent makes. */
export function agentCalls(tool: string, args: unknown): void {
  const json = JSON.stringify(args);
  say(`   ${style.yellow('agent →')} ${style.bold(tool)} ${fit(json === '{}' ? '' : json, WIDTH - tool.length - 12)}`);
}

/** An answer (or event), at most `maxLines` lines, each cut to the terminal width. */
export function answer(text: string, options: { maxLines?: number; label?: string; error?: boolean } = {}): void {
  const label = options.label ?? 'loadout ←';
  const lines = compactJson(text).trimEnd().split('\n');
  const maxLines = options.maxLines ?? 8;
  const shown = lines.slice(0, maxLines);
  shown.forEach((line, index) => {
    const prefix = index === 0 ? `   ${(options.error ? style.red : style.green)(label)} ` : ' '.repeat(label.length + 4);
    say(`${prefix}${fit(line, WIDTH - label.length - 4)}`);
  });
  if (lines.length > maxLines)
    say(`${' '.repeat(label.length + 4)}${style.dim(`… ${lines.length - maxLines} more line${lines.length - maxLines === 1 ? '' : 's'}`)}`);
}

/** Something the client noticed (a notification, a re-list). */
export function event(text: string): void {
  say(`   ${style.dim('client ·')} ${style.dim(text)}`);
}

/** A list of names, wrapped to the terminal width. */
export function nameList(names: readonly string[], highlight: ReadonlySet<string> = new Set()): void {
  const indent = '     ';
  let line = indent;
  let visible = indent.length; // escape codes take no columns
  for (const name of names) {
    if (visible + name.length + 2 > WIDTH && visible > indent.length) {
      say(line);
      line = indent;
      visible = indent.length;
    }
    line += `${highlight.has(name) ? style.bold(name) : name}  `;
    visible += name.length + 2;
  }
  if (visible > indent.length) say(line);
}

// Servers often answer with pretty-printed JSON; one line of it reads better in a demo.
function compactJson(text: string): string {
  if (!/^\s*[[{]/.test(text)) return text;
  try {
    return JSON.stringify(JSON.parse(text));
  } catch {
    return text;
  }
}

function fit(text: string, width: number): string {
  return text.length > width ? `${text.slice(0, Math.max(10, width - 1))}…` : text;
}
