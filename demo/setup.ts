// The demo's world: a temp config dir and data dir (never the user's home) with a servers.yaml
// for the bundled servers, the repo's example toolsets, and a small workspace of files.
import { cp, mkdir, mkdtemp, readFile, rm, writeFile } from 'node:fs/promises';
import { createRequire } from 'node:module';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import { stringify } from 'yaml';

/** Repository root (this file runs from dist/demo/). */
export const ROOT = path.resolve(path.dirname(fileURLToPath(import.meta.url)), '../..');
/** The shipped loadout CLI, the bundle `bin` points at. */
export const CLI = path.join(ROOT, 'dist/bundle/loadout.js');

/** Where the demo keeps its files. */
export interface DemoDirs {
  root: string;
  configDir: string;
  dataDir: string;
  workspace: string;
  cleanup(): Promise<void>;
}

const TODO = `# Launch checklist
- write the README
- record the demo
- ship loadout to the team
`;

/** Create the temp dirs and the servers.yaml that points at the bundled servers. */
export async function prepareDemo(): Promise<DemoDirs> {
  const root = await mkdtemp(path.join(tmpdir(), 'loadout-demo-'));
  const configDir = path.join(root, 'config');
  const dataDir = path.join(root, 'data');
  const workspace = path.join(root, 'workspace');
  await mkdir(workspace, { recursive: true });
  await mkdir(dataDir, { recursive: true });
  await writeFile(path.join(workspace, 'TODO.md'), TODO);
  await cp(path.join(ROOT, 'toolsets'), path.join(configDir, 'toolsets'), { recursive: true });
  const servers = {
    memory: {
      command: process.execPath,
      args: [await binOf('@modelcontextprotocol/server-memory')],
      env: { MEMORY_FILE_PATH: path.join(dataDir, 'memory.jsonl') },
    },
    files: { command: process.execPath, args: [await binOf('@modelcontextprotocol/server-filesystem'), workspace] },
    text: { command: process.execPath, args: [path.join(ROOT, 'dist/demo/servers/text.js')] },
  };
  await writeFile(path.join(configDir, 'servers.yaml'), stringify({ servers }));
  return { root, configDir, dataDir, workspace, cleanup: () => rm(root, { recursive: true, force: true }) };
}

// The servers are devDependencies with only a `bin` entry, so their script is found via package.json.
async function binOf(name: string): Promise<string> {
  const manifestPath = createRequire(import.meta.url).resolve(`${name}/package.json`);
  const manifest = JSON.parse(await readFile(manifestPath, 'utf8')) as { bin: string | Record<string, string> };
  const bin = typeof manifest.bin === 'string' ? manifest.bin : Object.values(manifest.bin)[0]!;
  return path.join(path.dirname(manifestPath), bin);
}
