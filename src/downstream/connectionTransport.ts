// The transport of a connection, by server type: a child process for stdio (its `${VAR}` values
// hidden in what it writes to stderr), SSE or streamable HTTP with OAuth when the server uses it.
// Each SDK transport class is imported when a server first needs it.
import type { Transport } from '@modelcontextprotocol/client';
import { expandEnv, expandEnvRecord, referencedValues, sandboxOf, serverEnvTexts, type ServerConfig } from '../config/index.js';
import { LoadoutError, errorMessage, type Logger } from '../shared/index.js';
import type { ChildProcessTransport } from './childProcessTransport.js';
import { StoredOAuthProvider, oauthTargetOf } from './oauthProvider.js';
import type { OAuthRecords } from './oauthRecords.js';
import type { MaskedValue } from './stderrTail.js';

// The SDK's default stdio read limit is 10 MB, and a bigger message closes the connection: a
// server returning a large (say 10 MB) result would look like a crash. Allow large results.
const MAX_STDIO_MESSAGE_BYTES = 256 * 1024 * 1024;

// The child process behind a stdio transport (its class is imported lazily, so no instanceof).
export function childOf(transport: Transport): ChildProcessTransport | undefined {
  return typeof (transport as Partial<ChildProcessTransport>).stderrLines === 'function' ? (transport as ChildProcessTransport) : undefined;
}

// The values a server's `${VAR}`s expand to, hidden in its stderr lines and failure messages, which
// are shown, logged and kept on disk. A value of under 4 characters is no secret, and hiding it
// would hide those letters everywhere.
export function maskedValues(config: ServerConfig, env: NodeJS.ProcessEnv): MaskedValue[] {
  return serverEnvTexts(config)
    .flatMap((text) => referencedValues(text, env))
    .filter(({ value }) => value.length >= 4);
}

/** What a transport is made with, besides the server's config. */
interface TransportContext {
  env: NodeJS.ProcessEnv;
  logger: Logger;
  /** Where OAuth records live; without them, HTTP servers get no OAuth. */
  oauthRecords: OAuthRecords | undefined;
  /** Aborted when loadout stops: a stdio child is then ended in a hurry. */
  shutdown?: AbortSignal;
  /** Values to hide in a stdio child's kept stderr lines. */
  masked: readonly MaskedValue[];
  /** loadout's own config and data dirs, which no sandboxed server may read. */
  protectedDirs?: readonly string[];
}

/** The transport for `config`; an address that cannot be used fails with SERVER_START_FAILED. */
export async function createTransport(serverName: string, config: ServerConfig, context: TransportContext): Promise<Transport> {
  try {
    return await createTransportOrThrow(serverName, config, context);
  } catch (error) {
    if (error instanceof LoadoutError) throw error;
    const reason = `its address is unusable: ${errorMessage(error)}`;
    throw new LoadoutError('SERVER_START_FAILED', `Server '${serverName}' has an unusable address: ${errorMessage(error)}`, {
      cause: error,
      reason,
    });
  }
}

async function createTransportOrThrow(
  serverName: string,
  config: ServerConfig,
  { env, logger, oauthRecords, shutdown, masked, protectedDirs = [] }: TransportContext,
): Promise<Transport> {
  const where = `Server '${serverName}'`;
  const { type } = config;
  if (type === 'stdio') {
    const { ChildProcessTransport } = await import('./childProcessTransport.js');
    const spawn = {
      command: expandEnv(config.command, env, `${where} command`),
      args: config.args.map((arg) => expandEnv(arg, env, `${where} args`)),
      // Servers expect the user's environment (PATH, HOME, npm settings), plus their own.
      env: { ...(env as Record<string, string>), ...expandEnvRecord(config.env, env, `${where} env`) },
      ...(config.cwd === undefined ? {} : { cwd: expandEnv(config.cwd, env, `${where} cwd`) }),
    };
    const policy = sandboxOf(config);
    // The sandbox's module loads only for a sandboxed server: a loadout without one never starts its runtime.
    const spawnable = policy ? await (await import('./sandbox.js')).sandboxed(serverName, policy, spawn, protectedDirs) : spawn;
    const transport = new ChildProcessTransport({
      ...spawnable,
      maxMessageBytes: MAX_STDIO_MESSAGE_BYTES,
      hurry: shutdown,
      masked,
    });
    // The child's stderr must be drained or a chatty server blocks; it is diagnostics only.
    transport.stderr.on('data', (chunk: Buffer) => logger.debug({ stderr: chunk.toString('utf8').trimEnd() }, 'downstream stderr'));
    return transport;
  }
  const url = new URL(expandEnv(config.url, env, `${where} url`));
  const requestInit = { headers: expandEnvRecord(config.headers, env, `${where} headers`) };
  const oauth = oauthRecords === undefined ? undefined : oauthTargetOf(serverName, config, env, oauthRecords);
  const authProvider = oauth ? await StoredOAuthProvider.open(oauth) : undefined;
  const options = authProvider ? { requestInit, authProvider, fetch: authProvider.fetch } : { requestInit };
  if (type === 'sse') {
    const { SSEClientTransport } = await import('@modelcontextprotocol/client');
    return new SSEClientTransport(url, options);
  }
  const { StreamableHTTPClientTransport } = await import('@modelcontextprotocol/client');
  return new StreamableHTTPClientTransport(url, options);
}
