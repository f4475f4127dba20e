// Installing the real servers into a scratch folder with `npm ci` from this folder's own lockfile
// (never into loadout's dependencies), once: a later run with the same lockfile installs nothing
// and so needs no network. Also finds each server's entry point and the MCP SDK it is built on.
import { spawnSync } from 'node:child_process';
import { createHash } from 'node:crypto';
import { copyFileSync, existsSync, mkdirSync, readFileSync, writeFileSync } from 'node:fs';
import path from 'node:path';
import type { RealServer } from './servers.js';

// Generous: about a gigabyte of packages over a slow registry.
const INSTALL_TIMEOUT_MS = 20 * 60_000;
const MARKER = '.installed-lock-sha256';

/** Install (if the lockfile changed since the last install) and say what was done. */
export function ensureInstalled(sourceDir: string, scratchDir: string): 'installed' | 'up to date' {
  const lockHash = createHash('sha256')
    .update(readFileSync(path.join(sourceDir, 'package.json')))
    .update(readFileSync(path.join(sourceDir, 'package-lock.json')))
    .digest('hex');
  const marker = path.join(scratchDir, MARKER);
  if (existsSync(marker) && readFileSync(marker, 'utf8') === lockHash) return 'up to date';
  mkdirSync(scratchDir, { recursive: true });
  for (const file of ['package.json', 'package-lock.json']) copyFileSync(path.join(sourceDir, file), path.join(scratchDir, file));
  // No install scripts: they download browsers, which listing never needs and an offline machine cannot fetch.
  const npm = process.platform === 'win32' ? 'npm.cmd' : 'npm';
  const result = spawnSync(npm, ['ci', '--ignore-scripts', '--no-audit', '--no-fund', '--loglevel=error'], {
    cwd: scratchDir,
    stdio: ['ignore', 'inherit', 'inherit'],
    timeout: INSTALL_TIMEOUT_MS,
    shell: process.platform === 'win32',
  });
  if (result.status !== 0)
    throw new Error(`npm ci in ${scratchDir} failed (${result.error?.message ?? `exit ${result.status ?? result.signal}`})`);
  writeFileSync(marker, lockHash);
  return 'installed';
}

/** Where a server's code is, and what it is built on. */
export interface ResolvedServer {
  /** The script its `bin` entry runs. */
  entry: string;
  version: string;
  /** The MCP SDK (or framework) it resolves to, e.g. `1.0.1`, `v2 2.0.0`, `fastmcp 4.3.2 (SDK 1.24.3)`. */
  sdk: string;
}

/** Find a server's entry point and SDK in the scratch install. */
export function resolveServer(scratchDir: string, server: RealServer): ResolvedServer {
  const packageDir = path.join(scratchDir, 'node_modules', server.package);
  const manifest = readManifest(packageDir);
  if (!manifest) throw new Error(`${server.package} is not installed in ${scratchDir}`);
  const bins = typeof manifest.bin === 'string' ? { [server.package]: manifest.bin } : (manifest.bin ?? {});
  const bin = server.bin ?? Object.keys(bins)[0];
  const relative = bin === undefined ? undefined : bins[bin];
  if (relative === undefined) throw new Error(`${server.package} has no bin${server.bin ? ` named ${server.bin}` : ''}`);
  return { entry: path.join(packageDir, relative), version: manifest.version ?? '?', sdk: sdkLabel(packageDir, manifest) };
}

interface Manifest {
  version?: string;
  bin?: string | Record<string, string>;
  dependencies?: Record<string, string>;
}

function sdkLabel(packageDir: string, manifest: Manifest): string {
  const dependencies = manifest.dependencies ?? {};
  const version = (name: string) => resolveFrom(packageDir, name)?.version ?? '?';
  const sdk = (from: string) => {
    const framework = resolveFrom(packageDir, from);
    const found = framework ? resolveFrom(framework.dir, '@modelcontextprotocol/sdk') : undefined;
    return found ? ` (SDK ${found.version})` : '';
  };
  for (const framework of ['fastmcp', 'firecrawl-fastmcp', 'mcp-framework'])
    if (framework in dependencies) return `${framework} ${version(framework)}${sdk(framework)}`;
  if ('@modelcontextprotocol/server' in dependencies) return `v2 ${version('@modelcontextprotocol/server')}`;
  if ('@modelcontextprotocol/sdk' in dependencies) return version('@modelcontextprotocol/sdk');
  return 'bundled';
}

// Node's lookup: the package's own node_modules, then each parent's.
function resolveFrom(fromDir: string, name: string): { dir: string; version: string } | undefined {
  for (let dir = fromDir; ; dir = path.dirname(dir)) {
    const candidate = path.join(dir, 'node_modules', name);
    const manifest = readManifest(candidate);
    if (manifest) return { dir: candidate, version: manifest.version ?? '?' };
    if (path.dirname(dir) === dir) return undefined;
  }
}

function readManifest(packageDir: string): Manifest | undefined {
  try {
    return JSON.parse(readFileSync(path.join(packageDir, 'package.json'), 'utf8')) as Manifest;
  } catch {
    return undefined;
  }
}
