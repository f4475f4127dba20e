// The one question the CLI asks a human ("apply these changes?"), on stderr, answered on stdin.
// With no terminal and nothing piped in, the answer is no.
import { createInterface } from 'node:readline';

/** Ask a yes/no question; true only for an answer starting with "y". */
export function askYesNo(question: string): Promise<boolean> {
  return new Promise((resolve) => {
    const readline = createInterface({ input: process.stdin, output: process.stderr, terminal: Boolean(process.stdin.isTTY) });
    let answered = false;
    readline.question(`${question} [y/N] `, (answer) => {
      answered = true;
      readline.close();
      resolve(/^\s*y/i.test(answer));
    });
    readline.on('close', () => {
      if (!answered) resolve(false);
    });
  });
}
