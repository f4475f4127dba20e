// The README's context-size figures cannot drift: its table is the rendering of
// bench/context-size.json, and the built gateway, in front of the same real servers, measures the
// same bytes now. After a change that moves them (a meta-tool's description, the instructions):
// npm run build && npm run bench -- --only=context-size, which rewrites both.
import { readFile } from 'node:fs/promises';
import path from 'node:path';
import { describe, expect, it } from 'vitest';
import { contextSizeTable, measureContextFigures, readContextFigures, readmeContextSizeTable } from '../../bench/contextFigures.js';
import { ROOT } from '../helpers/gateway.js';

const REGENERATE = 'stale: run npm run build && npm run bench -- --only=context-size';

describe("the README's context-size figures", () => {
  it('are the rendering of bench/context-size.json', async () => {
    const readme = await readFile(path.join(ROOT, 'README.md'), 'utf8');
    expect(readmeContextSizeTable(readme), REGENERATE).toBe(contextSizeTable(await readContextFigures()));
  });

  it('are what the built gateway measures now, byte for byte', async () => {
    expect(await measureContextFigures(), REGENERATE).toEqual(await readContextFigures());
  }, 120_000);
});
