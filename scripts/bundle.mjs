// Bundles the compiled CLI (dist/src/cli/main.js, from tsc) into dist/bundle/loadout.js, the
// shipped `bin`: a few files instead of ~400 modules to resolve and compile cut a warm start by
// about 40 %. It owns only that step; tsc still type-checks and emits everything else.
import { rm } from 'node:fs/promises';
import { build } from 'esbuild';

// CommonJS dependencies bundled into ESM still expect these (write-file-atomic names its temp
// files from __filename), and cli-table3/yaml are loaded with createRequire on first use.
const CJS_GLOBALS = [
  "import { createRequire as __loadoutCreateRequire } from 'node:module';",
  "import { fileURLToPath as __loadoutFileURLToPath } from 'node:url';",
  'const require = __loadoutCreateRequire(import.meta.url);',
  'const __filename = __loadoutFileURLToPath(import.meta.url);',
  "const __dirname = __loadoutFileURLToPath(new URL('.', import.meta.url));",
].join('\n');

// Chunk names carry content hashes: clear the old ones rather than let them pile up.
await rm('dist/bundle', { recursive: true, force: true });
await build({
  entryPoints: { loadout: 'dist/src/cli/main.js' },
  outdir: 'dist/bundle',
  bundle: true,
  // Code behind `await import()` (HTTP serving, downstream clients, file locks) goes into chunks
  // loaded on first use, as in the tsc output; whitespace and syntax minifying keeps names (and
  // error messages) intact but leaves less source for V8 to scan and hold (~3 MiB of RSS).
  splitting: true,
  chunkNames: 'chunk-[hash]',
  minifyWhitespace: true,
  minifySyntax: true,
  // Readable stack traces with `node --enable-source-maps`.
  sourcemap: 'linked',
  platform: 'node',
  format: 'esm',
  target: 'node20',
  banner: { js: CJS_GLOBALS },
  logLevel: 'warning',
});
