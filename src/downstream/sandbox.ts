// A stdio server's start inside its sandbox, through the sandbox runtime's own API
// (@anthropic-ai/sandbox-runtime: bubblewrap on Linux, sandbox-exec on macOS, one filtering proxy
// for the network): what it may not read (the defaults below, then its `deny_read`), where it may
// write (its own temp dir, the npx/uvx caches, its `write`), and which hosts it may reach. The
// runtime is one per process (its proxy, its policy): started on the first sandboxed start, never
// for a loadout whose servers run without one, and stopped when the pool closes.
import { spawn as spawnChild } from 'node:child_process';
import { mkdtempSync, rmSync } from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { randomUUID } from 'node:crypto';
import type { SandboxPolicy } from '../config/index.js';
import { LoadoutError } from '../shared/index.js';
import { SpawnFailure } from './childProcessTransport.js';

type Runtime = (typeof import('@anthropic-ai/sandbox-runtime'))['SandboxManager'];

/** Read-denied in every sandbox, under the server's home: keys, cloud and cluster credentials, browser profiles. */
export const DEFAULT_DENIED_READS = [
  '.ssh',
  '.aws',
  '.gnupg',
  '.config/gcloud',
  '.kube',
  '.docker',
  '.mozilla',
  '.config/google-chrome',
  '.config/chromium',
  '.config/BraveSoftware',
  '.config/microsoft-edge',
  '.config/vivaldi',
  'snap/firefox',
  'snap/chromium',
  'Library/Application Support/Google/Chrome',
  'Library/Application Support/Firefox',
  'Library/Application Support/BraveSoftware',
  'Library/Application Support/Microsoft Edge',
  'Library/Safari',
] as const;

// What `npx -y` and `uvx` write as they fetch a package: npm's cache (and its _npx folder), uv's
// cache and its tool installs. Without them a sandboxed `npx -y pkg` could not start.
const PACKAGE_CACHES = ['.npm', '.cache/uv', '.local/share/uv'] as const;

const INSTALL_HINT =
  process.platform === 'darwin'
    ? 'install ripgrep (brew install ripgrep)'
    : 'install bubblewrap, socat and ripgrep (Debian/Ubuntu: apt-get install bubblewrap socat ripgrep)';

const SUPPORTED_PLATFORMS = new Set<NodeJS.Platform>(['linux', 'darwin']);

/** What to spawn, as the transport spawns it. */
export interface Spawnable {
  command: string;
  args: string[];
  env: Record<string, string>;
  cwd?: string;
}

/** A spawn wrapped in its sandbox, and what to release once its process is gone (its temp dir). */
export interface SandboxedSpawn extends Spawnable {
  release(): void;
  /** The sandbox's refusals that `stderrLines` (the server's own) and the runtime's proxy show, one line each, naming what to allow. */
  refusals(stderrLines: readonly string[]): string[];
}

let runtime: Promise<Runtime> | undefined;
// Sandboxed children not yet gone: the runtime is not stopped under them, but once the last goes
// when a stop was asked meanwhile (its proxy would keep the process alive).
let running = 0;
let stopWhenIdle = false;
// The proxy holds one allow-list for the process: the hosts of every restricted server started.
const allowedHosts = new Set<string>();

/** Why the sandbox cannot run on this machine, and what to do (what to install); undefined when it can. */
async function sandboxUnavailable(): Promise<{ problem: string; fix: string } | undefined> {
  // The runtime's Windows support is an alpha that needs a machine-wide install step: not offered.
  if (!SUPPORTED_PLATFORMS.has(process.platform))
    return { problem: `the sandbox does not run on ${process.platform}`, fix: 'run it on Linux or macOS, or set sandbox: false' };
  const { SandboxManager } = await import('@anthropic-ai/sandbox-runtime');
  const { errors } = await SandboxManager.checkDependenciesAsync();
  return errors.length === 0 ? undefined : { problem: `the sandbox cannot run here (${errors.join(', ')})`, fix: INSTALL_HINT };
}

/**
 * `spawn` wrapped in `policy`'s sandbox. A machine where the sandbox cannot run refuses the server
 * (SERVER_START_FAILED, naming what to install): it is never started without its sandbox.
 */
export async function sandboxed(
  serverName: string,
  policy: SandboxPolicy,
  spawn: Spawnable,
  /** loadout's own config and data dirs (secrets.env, tokens, the store's key): never readable. */
  protectedDirs: readonly string[],
): Promise<SandboxedSpawn> {
  const manager = await startedRuntime(serverName);
  const home = spawn.env.HOME || os.homedir();
  const inHome = (entry: string): string =>
    entry === '~' ? home : entry.startsWith('~/') ? path.join(home, entry.slice(2)) : path.resolve(entry);
  const tempDir = mkdtempSync(path.join(os.tmpdir(), `loadout-${serverName}-`));
  running += 1;
  const release = (): void => {
    running -= 1;
    rmSync(tempDir, { recursive: true, force: true });
    // It removes the mount points of every sandbox of the process, so only once none runs.
    if (running > 0) return;
    manager.cleanupAfterCommand();
    if (stopWhenIdle) void stopSandbox();
  };
  const allow = policy.network.allow;
  if (allow && allow.some((host) => !allowedHosts.has(host))) {
    for (const host of allow) allowedHosts.add(host);
    const current = manager.getConfig()!;
    manager.updateConfig({ ...current, network: { ...current.network, allowedDomains: [...allowedHosts] } });
  }
  const filesystem = {
    denyRead: [
      ...DEFAULT_DENIED_READS.map((entry) => path.join(home, entry)),
      ...protectedDirs,
      ...policy.filesystem.deny_read.map(inHome),
    ],
    allowWrite: [tempDir, ...PACKAGE_CACHES.map((entry) => path.join(home, entry)), ...policy.filesystem.write.map(inHome)],
    denyWrite: [],
  };
  const command = [spawn.command, ...spawn.args].map(shellWord).join(' ');
  try {
    const wrapping = { commandId: `loadout-${serverName}-${randomUUID()}` };
    const { argv } = allow
      ? await manager.wrapWithSandboxArgv(
          command,
          undefined,
          { filesystem, network: { allowedDomains: allow, deniedDomains: [] } },
          undefined,
          spawn.cwd,
          wrapping,
        )
      : await wrappedWithOpenNetwork(manager, () =>
          manager.wrapWithSandboxArgv(command, undefined, { filesystem }, undefined, spawn.cwd, wrapping),
        );
    const env = { ...spawn.env, TMPDIR: tempDir, TMP: tempDir, TEMP: tempDir };
    const refusals = (lines: readonly string[]): string[] => [
      ...filesystemRefusals(lines, home, filesystem),
      ...manager
        .getSandboxViolationStore()
        .getViolationsForCommand(wrapping.commandId)
        .map((violation) => `sandbox: refused ${violation.line.replace(/^deny /, '')}`),
    ];
    return { command: argv[0]!, args: argv.slice(1), env, ...(spawn.cwd === undefined ? {} : { cwd: spawn.cwd }), release, refusals };
  } catch (error) {
    release();
    throw new LoadoutError('SERVER_START_FAILED', `Server '${serverName}' could not be wrapped in its sandbox: ${String(error)}`, {
      cause: error,
      reason: `its sandbox could not be set up: ${String(error)}`,
    });
  }
}

// The runtime cuts a command's network when either its own allow-list or the process's is set, and
// the process's is always set (its proxy reads it at each connection). A server whose network stays open is
// wrapped with the process's list set aside: the runtime reads it before its first await, and its
// proxy reads it again at each connection, by which time it is back.
function wrappedWithOpenNetwork<T>(manager: Runtime, wrap: () => Promise<T>): Promise<T> {
  const network = manager.getConfig()!.network as { allowedDomains?: string[] };
  const held = network.allowedDomains;
  delete network.allowedDomains;
  try {
    return wrap();
  } finally {
    if (held !== undefined) network.allowedDomains = held;
  }
}

async function startedRuntime(serverName: string): Promise<Runtime> {
  runtime ??= (async () => {
    const { SandboxManager } = await import('@anthropic-ai/sandbox-runtime');
    try {
      if (!SUPPORTED_PLATFORMS.has(process.platform)) throw new Error(`unsupported platform ${process.platform}`);
      // Filesystem rules are given per server at each wrap; the proxy starts with no host allowed.
      await SandboxManager.initialize({
        network: { allowedDomains: [], deniedDomains: [], strictAllowlist: true },
        filesystem: { denyRead: [], allowWrite: [], denyWrite: [] },
      });
    } catch (error) {
      // It checks what it needs first; only a refusal is worded again, to name what to install.
      const unavailable = await sandboxUnavailable();
      if (unavailable === undefined) throw error;
      const problem = `it is sandboxed, and ${unavailable.problem}`;
      throw new SpawnFailure(problem, { text: unavailable.fix }, new Error(problem));
    }
    return SandboxManager;
  })();
  try {
    return await runtime;
  } catch (error) {
    runtime = undefined;
    const problem = error instanceof Error ? error.message : String(error);
    // Never started without it: the start fails, naming what to install.
    throw new LoadoutError('SERVER_START_FAILED', `Server '${serverName}' was not started: ${problem}`, { cause: error, reason: problem });
  }
}

/**
 * Whether the sandbox works here, as `doctor` checks it: a trial process in the default sandbox
 * must write in its temp dir and find `protectedDirs[0]` (loadout's config dir) empty. Undefined
 * when it does; else the problem, in one line naming what to install where something is missing.
 */
export async function sandboxProblem(protectedDirs: readonly string[]): Promise<string | undefined> {
  const missing = await sandboxUnavailable();
  if (missing !== undefined) return `${missing.problem}: ${missing.fix}`;
  const trial = `const fs = require('node:fs'); fs.writeFileSync(process.env.TMPDIR + '/trial', 'x'); process.exit(fs.readdirSync(process.argv[1]).length === 0 ? 0 : 2);`;
  const policy = { filesystem: { deny_read: [], write: [] }, network: {} };
  try {
    const wrapped = await sandboxed(
      'doctor',
      policy,
      { command: process.execPath, args: ['-e', trial, protectedDirs[0]!], env: { ...(process.env as Record<string, string>) } },
      protectedDirs,
    );
    const { code, stderr } = await new Promise<{ code: number | null; stderr: string }>((resolve) => {
      const child = spawnChild(wrapped.command, wrapped.args, { env: wrapped.env, stdio: ['ignore', 'ignore', 'pipe'] });
      let text = '';
      child.stderr.on('data', (chunk: Buffer) => (text += chunk.toString('utf8')));
      child.once('error', (error) => resolve({ code: null, stderr: error.message }));
      child.once('close', (exit) => {
        wrapped.release();
        resolve({ code: exit, stderr: text });
      });
    });
    if (code === 0) return undefined;
    if (code === 2) return `a process in the sandbox could read ${protectedDirs[0]}, which the sandbox should hide`;
    return `a process in the sandbox failed (exit ${code}): ${stderr.trim().split('\n').slice(-3).join(' ')}`;
  } catch (error) {
    return error instanceof Error ? error.message : String(error);
  } finally {
    await stopSandbox();
  }
}

/** Stops the sandbox runtime (its proxy, its helpers) if a sandboxed server started it and none still runs. */
export async function stopSandbox(): Promise<void> {
  stopWhenIdle = running > 0;
  if (stopWhenIdle) return;
  const started = runtime;
  runtime = undefined;
  allowedHosts.clear();
  if (!started) return;
  const manager = await started.catch(() => undefined);
  await manager?.reset();
}

// A failed file access a server reported in its stderr, in the words Node and Python use:
// "EACCES: permission denied, open '/p'", "[Errno 30] Read-only file system: '/p'".
const FILE_ERROR = /\b(EACCES|EPERM|EROFS|ENOENT)\b[^']*'([^']+)'|\[Errno (13|1|30|2)\][^']*'([^']+)'/;
const ERRNO_NAMES: Record<string, string> = { '13': 'EACCES', '1': 'EPERM', '30': 'EROFS', '2': 'ENOENT' };

// Each failed access under a read-denied folder, or failed write outside the writable ones, named
// as the sandbox's, with what to change: the server's own error says only "permission denied".
function filesystemRefusals(lines: readonly string[], home: string, rules: { denyRead: string[]; allowWrite: string[] }): string[] {
  const within = (file: string, dir: string): boolean => file === dir || file.startsWith(dir.endsWith(path.sep) ? dir : dir + path.sep);
  const shown = (file: string): string => (within(file, home) ? `~${file.slice(home.length)}` : file);
  const found = new Set<string>();
  for (const line of lines) {
    const match = FILE_ERROR.exec(line);
    if (!match) continue;
    const code = match[1] ?? ERRNO_NAMES[match[3]!]!;
    const file = path.resolve(match[2] ?? match[4]!);
    const denied = rules.denyRead.find((dir) => within(file, dir));
    if (denied) found.add(`sandbox: refused reading ${shown(file)} (${code}): ${shown(denied)} is hidden from this server`);
    else if (code !== 'ENOENT' && !rules.allowWrite.some((dir) => within(file, dir)))
      found.add(`sandbox: refused writing ${shown(file)} (${code}): add its folder to sandbox.filesystem.write to allow it`);
  }
  return [...found];
}

// One word for the shell the runtime runs the command in: single-quoted, any ' closed and escaped.
function shellWord(word: string): string {
  return /^[\w@%+=:,./-]+$/.test(word) ? word : `'${word.replaceAll("'", `'\\''`)}'`;
}
