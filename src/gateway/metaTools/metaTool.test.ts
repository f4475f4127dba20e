// How a meta-tool's invalid arguments are worded: a missing one is "required", told by the
// arguments themselves, never by zod's words.
import { describe, expect, it } from 'vitest';
import * as z from 'zod';
import { READS_ONLY, describeInvalidArguments, parseMetaToolArguments, type MetaTool } from './metaTool.js';

function toolOf(input: z.ZodType): MetaTool {
  return { name: 'demo', description: 'A demo.', input, example: { name: 'web' }, annotations: READS_ONLY, run: () => Promise.resolve('') };
}

function wording(tool: MetaTool, args: Record<string, unknown>): string {
  const parsed = parseMetaToolArguments(tool, args);
  if (parsed.success) throw new Error('expected the arguments to be refused');
  return describeInvalidArguments(tool, parsed.error, args);
}

describe('describeInvalidArguments', () => {
  it('says "required" for a missing argument, nested too, and zod\'s words for a wrong one', () => {
    const tool = toolOf(z.strictObject({ name: z.string(), limits: z.strictObject({ calls: z.number() }) }));
    expect(wording(tool, { limits: {} })).toBe(
      'Invalid arguments for demo: name: required (string); limits.calls: required (number). Example: {"name":"web"}',
    );
    expect(wording(tool, { name: null, limits: { calls: 1 } })).toMatch(
      /^Invalid arguments for demo: name: Invalid input: expected string, received null\./,
    );
  });

  it("does not take a present value for a missing one when its message reads like zod's for undefined", () => {
    const tool = toolOf(z.strictObject({ name: z.string({ error: 'expected a name, received undefined' }) }));
    expect(wording(tool, { name: 5 })).toBe(
      'Invalid arguments for demo: name: expected a name, received undefined. Example: {"name":"web"}',
    );
  });
});
