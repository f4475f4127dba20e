// Bundles the compiled CLI (dist/src/cli/main.js, from tsc) into dist/bundle/loadout.js, the
// shipped `bin`: a few files instead of ~400 modules to resolve and compile cut a warm start by
// about 40 %. It owns only that step; tsc still type-checks and emits everything else.
import { readFile, rm } from 'node:fs/promises';
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

// The SDK's Server and Client import ajv at load time (through their runtime `_shims` module, whose
// DefaultJsonSchemaValidator is ajv on Node) for a default JSON Schema validator that loadout
// never builds (it passes lazySchemaValidator()). Parsing and evaluating ajv's ~290 KB cost
// ~55 M instructions, a tenth of what a warm start adds to bare node. So ajv and the SDK's
// provider are bundled apart into AJV_FILE (CommonJS, so it can be required synchronously), and
// every import of the shims or of the provider gets a stand-in that requires that file on the
// first `new AjvJsonSchemaValidator()`, i.e. at the first schema check, never at start. The
// stand-in also carries the shims' other exports (the Node values they hold).
const AJV_FILE = 'ajv-provider.cjs';
const AJV_ENTRY = '@modelcontextprotocol/server/validators/ajv';
const COMMON = { bundle: true, minifyWhitespace: true, minifySyntax: true, platform: 'node', target: 'node20', logLevel: 'warning' };
const AJV_PROVIDER = /^@modelcontextprotocol\/(server|client)\/(_shims|validators\/ajv)$/;
const lazyAjvProvider = {
  name: 'lazy-ajv-provider',
  setup(build) {
    build.onResolve({ filter: AJV_PROVIDER }, () => ({ path: 'ajv-provider', namespace: 'lazy-ajv-provider' }));
    build.onResolve({ filter: /^\.\/ajv-provider\.cjs$/ }, (args) => ({ path: args.path, external: true }));
    build.onLoad({ filter: /.*/, namespace: 'lazy-ajv-provider' }, () => ({
      contents: `export class AjvJsonSchemaValidator {
        constructor(...args) {
          const { AjvJsonSchemaValidator: Provider } = require('./${AJV_FILE}');
          return new Provider(...args);
        }
      }
      export { AjvJsonSchemaValidator as DefaultJsonSchemaValidator };
      export { default as process } from 'node:process';
      export const CORS_IS_POSSIBLE = false;`,
    }));
  },
};

// The meta-tools' tools/list entries, computed from the compiled source now rather than by zod at
// every start (see listedMetaTool).
const { META_TOOLS } = await import('../dist/src/gateway/metaTools/index.js');
const { listedMetaTool } = await import('../dist/src/gateway/metaTools/metaTool.js');
const META_TOOL_LISTING = Object.fromEntries(META_TOOLS.map((tool) => [tool.name, listedMetaTool(tool)]));
// The key of servers.yaml's parsed copies, likewise computed now (see serversFileSchemaHash).
const { serversFileSchemaHash } = await import('../dist/src/config/serversFileCache.js');

// The version `--version` and the MCP handshakes report (see shared/version.ts).
const { version } = JSON.parse(await readFile('package.json', 'utf8'));

// Chunk names carry content hashes: clear the old ones rather than let them pile up.
await rm('dist/bundle', { recursive: true, force: true });
await build({
  // run-code's worker thread is an entry of its own, beside the chunks that start it (codeRunner.ts).
  entryPoints: { loadout: 'dist/src/cli/main.js', codeWorker: 'dist/src/gateway/codeMode/codeWorker.js' },
  outdir: 'dist/bundle',
  ...COMMON,
  // Code behind `await import()` (HTTP serving, downstream clients, file locks) goes into chunks
  // loaded on first use, as in the tsc output; whitespace and syntax minifying keeps names (and
  // error messages) intact but leaves less source for V8 to scan and hold (~3 MiB of RSS).
  splitting: true,
  chunkNames: 'chunk-[hash]',
  // Readable stack traces with `node --enable-source-maps`.
  sourcemap: 'linked',
  format: 'esm',
  banner: { js: CJS_GLOBALS },
  define: {
    LOADOUT_META_TOOL_LISTING: JSON.stringify(JSON.stringify(META_TOOL_LISTING)),
    LOADOUT_SERVERS_SCHEMA_HASH: JSON.stringify(serversFileSchemaHash()),
    LOADOUT_PACKAGE_VERSION: JSON.stringify(version),
  },
  plugins: [lazyAjvProvider],
  // The OpenTelemetry SDK (~60 packages, some with native-looking optional parts) loads from
  // node_modules, and only when telemetry is on (telemetry/start.ts): never in a chunk of its own here.
  // QuickJS likewise, for run-code's worker only: its WebAssembly file is found beside its own module.
  // The sandbox runtime finds its own helpers (apply-seccomp, the proxy agent) beside its files, and
  // loads only when a sandboxed server starts (downstream/sandbox.ts): it stays in node_modules too.
  external: ['@opentelemetry/*', 'quickjs-emscripten-core', '@jitl/*', '@anthropic-ai/sandbox-runtime'],
});
await build({ ...COMMON, entryPoints: [AJV_ENTRY], outfile: `dist/bundle/${AJV_FILE}`, format: 'cjs' });

// The bench's floor for a warm start: the trivial echo server bundled exactly as loadout is, so
// the start-up cost of any SDK server shows next to loadout's in the same run; and its 2026-07-28
// counterpart (served by serveStdio) for a modern client's start.
await rm('dist/bench/bundled', { recursive: true, force: true });
await build({
  ...COMMON,
  entryPoints: { echo: 'dist/test/fixtures/echo.js', 'modern-echo': 'dist/bench/modernEcho.js' },
  outdir: 'dist/bench/bundled',
  format: 'esm',
  banner: { js: CJS_GLOBALS },
  plugins: [lazyAjvProvider],
});
await build({
  ...COMMON,
  entryPoints: [AJV_ENTRY],
  outfile: `dist/bench/bundled/${AJV_FILE}`,
  format: 'cjs',
});
