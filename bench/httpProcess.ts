// The bench's view of an MCP server over streamable HTTP: a spawned process that prints its URL
// (loadout `serve --http --port 0`, or the interactive fixture), with one SDK Client per MCP
// session. Closing ends every session (DELETE) and then the process (SIGTERM, waited for).
import { Client, StreamableHTTPClientTransport } from '@modelcontextprotocol/client';
import { spawn, type ChildProcess } from 'node:child_process';
import { INTERACTIVE_FIXTURE } from './catalogFixture.js';
import { loadoutCommandArgs } from './processes.js';

/** A spawned streamable-HTTP MCP server with `sessions` connected clients. */
export interface HttpMcpProcess {
  pid: number;
  url: string;
  /** One client per MCP session. */
  clients: Client[];
  stderr(): string;
  /** End the sessions, then the process; resolves once it has exited. */
  close(): Promise<void>;
}

const STARTUP_TIMEOUT_MS = 20_000;
const EXIT_TIMEOUT_MS = 5_000;

/** `loadout <globalArgs> serve --http --port 0 <serveArgs>` with `sessions` clients. */
export function spawnHttpLoadout(
  globalArgs: string[],
  serveArgs: string[],
  sessions: number,
  nodeFlags: string[] = [],
): Promise<HttpMcpProcess> {
  // serve --http announces its bound URL on stderr, so port 0 needs no guessing.
  return spawnHttpMcp(
    [...nodeFlags, ...loadoutCommandArgs(globalArgs, ['--http', '--port', '0', ...serveArgs])],
    /serving MCP at (http:\/\/\S+)/,
    sessions,
  );
}

/** A new 2025-era MCP session with the server at `url` (its own initialize), and its transport. */
export async function connectHttpSession(url: string, name: string): Promise<{ client: Client; transport: StreamableHTTPClientTransport }> {
  const transport = new StreamableHTTPClientTransport(new URL(url));
  const client = new Client({ name, version: '1.0.0' }, { capabilities: {} });
  await client.connect(transport);
  return { client, transport };
}

/** The interactive fixture (it has an `echo` tool) over streamable HTTP with `sessions` clients. */
export function spawnHttpFixture(sessions: number): Promise<HttpMcpProcess> {
  return spawnHttpMcp([INTERACTIVE_FIXTURE, 'http'], /LISTENING (http:\/\/\S+)/, sessions);
}

async function spawnHttpMcp(nodeArgs: string[], urlLine: RegExp, sessions: number): Promise<HttpMcpProcess> {
  const child = spawn(process.execPath, nodeArgs, { stdio: ['ignore', 'pipe', 'pipe'] });
  let output = '';
  const clients: Client[] = [];
  const transports: StreamableHTTPClientTransport[] = [];
  const close = async (): Promise<void> => {
    await Promise.allSettled(transports.map((transport) => transport.terminateSession()));
    await Promise.allSettled(clients.map((client) => client.close()));
    await stopProcess(child);
  };
  try {
    const url = await announcedUrl(child, urlLine, (chunk) => {
      output = (output + chunk).slice(-20_000);
    });
    // Connected one after another: each is its own initialize, so each gets its own MCP session.
    for (let session = 0; session < sessions; session++) {
      const { client, transport } = await connectHttpSession(url, `loadout-bench-${session}`);
      transports.push(transport);
      clients.push(client);
    }
    return { pid: child.pid!, url, clients, stderr: () => output, close };
  } catch (error) {
    await close();
    throw new Error(`${nodeArgs.join(' ')} did not serve HTTP: ${error instanceof Error ? error.message : String(error)}\n${output}`);
  }
}

// Resolves with the URL the child prints (stdout or stderr); both streams keep draining into `onOutput`.
function announcedUrl(child: ChildProcess, urlLine: RegExp, onOutput: (chunk: string) => void): Promise<string> {
  return new Promise((resolve, reject) => {
    let seen = '';
    const timer = setTimeout(() => reject(new Error(`no URL announced within ${STARTUP_TIMEOUT_MS} ms`)), STARTUP_TIMEOUT_MS);
    timer.unref();
    const read = (chunk: Buffer): void => {
      const text = chunk.toString('utf8');
      onOutput(text);
      seen = (seen + text).slice(-4_000);
      const url = urlLine.exec(seen)?.[1];
      if (url) {
        clearTimeout(timer);
        resolve(url);
      }
    };
    child.stdout?.on('data', read);
    child.stderr?.on('data', read);
    child.once('error', reject);
    child.once('exit', (code, signal) => reject(new Error(`exited (${signal ?? `code ${code}`}) before serving`)));
  });
}

// SIGTERM lets loadout close its gateway (and its downstream children); SIGKILL if it hangs.
async function stopProcess(child: ChildProcess): Promise<void> {
  if (child.exitCode !== null || child.signalCode !== null) return;
  const exited = new Promise<void>((resolve) => child.once('exit', () => resolve()));
  child.kill('SIGTERM');
  let timer: NodeJS.Timeout | undefined;
  const hung = new Promise<'hung'>((resolve) => {
    timer = setTimeout(() => resolve('hung'), EXIT_TIMEOUT_MS);
  });
  if ((await Promise.race([exited, hung])) === 'hung') {
    child.kill('SIGKILL');
    await exited;
  }
  clearTimeout(timer);
}
