// The CLI's failure text: whole multi-line messages, long lines and long bodies cut and marked,
// and a schema error shown as its issues instead of a JSON dump.
import * as z from 'zod';
import { describe, expect, it } from 'vitest';
import { errorText, failureMessage } from './output.js';

describe('CLI failure text', () => {
  it('keeps every line of a short multi-line message', () => {
    expect(errorText('No backend. Add:\noptimization:\n  backend: openai\n')).toBe('No backend. Add:\noptimization:\n  backend: openai');
  });

  it('cuts a long line and a long body, and says how much was cut', () => {
    const text = errorText(`HTTP 500: ${'x'.repeat(1000)}\n${Array.from({ length: 40 }, (_, i) => `line ${i}`).join('\n')}`);
    const lines = text.split('\n');
    expect(lines[0]).toMatch(/^HTTP 500: x+… \[610 more characters cut\]$/);
    expect(lines).toHaveLength(31);
    expect(lines.at(-1)).toBe('… [11 more lines cut]');
  });

  it('shows a zod error as its issues, not as a JSON array', () => {
    const result = z.strictObject({ name: z.string() }).safeParse({ name: 3 });
    expect(failureMessage(result.error)).toBe('Invalid input: expected string, received number at name');
  });
});
