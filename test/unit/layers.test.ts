// The dependency rule (CONTRIBUTING.md, Layers and code), checked on the source: a folder imports
// only lower layers, and only through their index.ts; inside gateway/, so do its wings. A violation
// names the file and the import.
import { readdir, readFile } from 'node:fs/promises';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import { describe, expect, it } from 'vitest';

// Not from the test helpers: they import src, and this test must run even when src's imports are broken.
const ROOT = path.resolve(path.dirname(fileURLToPath(import.meta.url)), '../..');

/** Layer of each src folder; a folder may import folders of a strictly lower layer. */
const LAYER: Record<string, number> = {
  shared: 0,
  telemetry: 1,
  config: 2,
  store: 3,
  downstream: 4,
  identity: 4,
  audit: 5,
  catalog: 5,
  registry: 6,
  toolsets: 7,
  optimization: 7,
  runtime: 8,
  gateway: 9,
  cli: 10,
};

/**
 * Order of gateway/'s wings: a wing imports only lower wings, each through its index.ts; the files at
 * gateway/'s top (the shared services, the session, createGateway) reach a wing only through its index.ts too.
 */
const GATEWAY_WING: Record<string, number> = {
  codeMode: 0,
  metaTools: 1,
  calls: 2,
  stdio: 3,
  content: 4,
  http: 5,
};

async function sourceFiles(dir: string): Promise<string[]> {
  const entries = await readdir(dir, { withFileTypes: true, recursive: true });
  return entries
    .filter((e) => e.isFile() && e.name.endsWith('.ts') && !e.name.endsWith('.test.ts'))
    .map((e) => path.join(e.parentPath, e.name));
}

describe('source layering', () => {
  it('imports only lower layers, and only through their index.ts', async () => {
    const src = path.join(ROOT, 'src');
    const violations: string[] = [];
    for (const file of await sourceFiles(src)) {
      const folder = path.relative(src, file).split(path.sep)[0]!;
      expect(LAYER, `src/${folder} has no layer in this test`).toHaveProperty(folder);
      const text = await readFile(file, 'utf8');
      for (const [, specifier] of text.matchAll(/(?:from|import\(?)\s*'(\.\.?\/[^']+)'/g)) {
        const target = path.relative(src, path.resolve(path.dirname(file), specifier!)).split(path.sep);
        const targetFolder = target[0]!;
        if (targetFolder === folder || !(targetFolder in LAYER)) continue;
        const where = `${path.relative(ROOT, file)} imports '${specifier}'`;
        if (LAYER[targetFolder]! >= LAYER[folder]!) violations.push(`${where}: ${targetFolder} is not below ${folder}`);
        if (target.length !== 2 || target[1] !== 'index.js') violations.push(`${where}: go through ${targetFolder}/index.ts`);
      }
    }
    expect(violations).toEqual([]);
  });

  it("imports gateway/'s wings only through their index.ts, and only lower wings from a wing", async () => {
    const gateway = path.join(ROOT, 'src/gateway');
    const violations: string[] = [];
    const wingOf = (file: string): string | undefined => {
      const parts = path.relative(gateway, file).split(path.sep);
      return parts.length > 1 ? parts[0] : undefined;
    };
    for (const file of await sourceFiles(gateway)) {
      const wing = wingOf(file);
      if (wing !== undefined) expect(GATEWAY_WING, `src/gateway/${wing} has no place in this test`).toHaveProperty(wing);
      const text = await readFile(file, 'utf8');
      for (const [, specifier] of text.matchAll(/(?:from|import\(?)\s*'(\.\.?\/[^']+)'/g)) {
        const resolved = path.resolve(path.dirname(file), specifier!);
        if (path.relative(gateway, resolved).startsWith('..')) continue;
        const target = wingOf(resolved);
        if (target === undefined || target === wing) continue;
        const where = `${path.relative(ROOT, file)} imports '${specifier}'`;
        if (path.basename(resolved) !== 'index.js') violations.push(`${where}: go through gateway/${target}/index.ts`);
        if (wing !== undefined && GATEWAY_WING[target]! >= GATEWAY_WING[wing]!)
          violations.push(`${where}: gateway/${target} is not below gateway/${wing}`);
      }
    }
    expect(violations).toEqual([]);
  });

  it('has no import cycle among the files of src, type-only imports included', async () => {
    const src = path.join(ROOT, 'src');
    const imports = new Map<string, string[]>();
    for (const file of await sourceFiles(src)) {
      const text = await readFile(file, 'utf8');
      const targets = [...text.matchAll(/(?:from|import\(?)\s*'(\.\.?\/[^']+)'/g)].map(([, specifier]) =>
        path.resolve(path.dirname(file), specifier!).replace(/\.js$/, '.ts'),
      );
      imports.set(file, targets);
    }
    const cycles: string[] = [];
    const state = new Map<string, 'visiting' | 'done'>();
    const visit = (file: string, trail: string[]): void => {
      if (state.get(file) === 'done') return;
      if (state.get(file) === 'visiting') {
        cycles.push([...trail.slice(trail.indexOf(file)), file].map((f) => path.relative(src, f)).join(' → '));
        return;
      }
      state.set(file, 'visiting');
      for (const target of imports.get(file) ?? []) visit(target, [...trail, file]);
      state.set(file, 'done');
    };
    for (const file of imports.keys()) visit(file, []);
    expect(cycles).toEqual([]);
  });
});
