// `loadout auth SERVER`: log in to an HTTP/SSE server that uses OAuth (opens the browser, or
// prints the URL when it cannot, and waits on a loopback redirect); `--logout` forgets its
// tokens and registration. The flow itself is downstream's loginToServer.
import { spawn } from 'node:child_process';
import type { Command } from 'commander';
import { expansionEnv, loadServersFile } from '../../config/index.js';
import { fileOAuthRecords, loginToServer, storeOAuthRecords, type OAuthRecords } from '../../downstream/index.js';
import { discoveryRecordsOf, recordDiscoveryOutcomes } from '../../runtime/index.js';
import { LoadoutError } from '../../shared/index.js';
import { configNotFound, requireServer } from '../configView.js';
import { printJson, printLines, printNote } from '../output.js';
import { commandEnvironment, withCommandStore } from '../program.js';

const DEFAULT_WAIT_SECONDS = 300;

/** Register `auth` on the program. */
export function registerAuth(program: Command): void {
  program
    .command('auth')
    .description('log in to a server that uses OAuth (browser + loopback redirect); --logout forgets its tokens')
    .argument('<server>', 'the server to log in to')
    .option('--logout', "forget the server's tokens and client registration")
    .option('--no-browser', 'print the login URL instead of opening a browser')
    .option('--timeout <seconds>', 'how long to wait for the browser to come back', String(DEFAULT_WAIT_SECONDS))
    .option('--json', 'machine-readable output (the login URL then goes to stderr)')
    .action(async (server: string, options: { logout?: boolean; browser: boolean; timeout: string; json?: boolean }, command: Command) => {
      const { paths, logger, storeUrl } = commandEnvironment(command);
      const loaded = await loadServersFile(paths.serversFile);
      if (!loaded.exists) throw configNotFound(paths);
      const config = requireServer(loaded.config, server);
      await withCommandStore(storeUrl, logger, async (store) => {
        const records: OAuthRecords = store ? storeOAuthRecords(store.oauth) : fileOAuthRecords(paths.oauthDir);
        if (options.logout) {
          const forgot = await records.delete(server);
          if (options.json) printJson({ server, loggedOut: forgot });
          else printLines(forgot ? `Forgot the tokens of '${server}'.` : `No tokens stored for '${server}'.`);
          return;
        }
        const waitSeconds = Number(options.timeout);
        if (!(waitSeconds > 0))
          throw new LoadoutError('INVALID_ARGUMENT', `--timeout must be a positive number of seconds, got '${options.timeout}'`);
        const abort = new AbortController();
        const onInterrupt = (): void => abort.abort();
        process.once('SIGINT', onInterrupt);
        try {
          await loginToServer({
            server,
            config,
            oauthRecords: records,
            env: expansionEnv(paths.secretsFile),
            timeoutMs: waitSeconds * 1000,
            signal: abort.signal,
            onAuthorizationUrl: (url) => {
              const opened = options.browser && canOpenBrowser() && openBrowser(url.href);
              const intro = opened
                ? `Opened the browser to log in to '${server}'. If it did not open, visit:`
                : `To log in to '${server}', open this URL in a browser:`;
              // stdout holds only the final JSON; the human still needs the URL.
              if (options.json) printNote(`${intro}\n${url.href}`);
              else printLines(intro, url.href);
            },
          });
        } finally {
          process.removeListener('SIGINT', onInterrupt);
        }
        // A discovery that failed for want of this login no longer stands: nothing waits out its backoff.
        await recordDiscoveryOutcomes(await discoveryRecordsOf(paths, store), loaded.config.servers, [{ server, ok: true }]);
        const tokensFile = records.where(server);
        if (options.json) printJson({ server, authorized: true, tokensFile });
        else printLines(`Authorized '${server}'; tokens saved in ${tokensFile} (refreshed automatically).`);
      });
    });
}

// In CI, over SSH without a display, or in tests, there is no browser to open: print instead.
function canOpenBrowser(): boolean {
  if (process.env.CI) return false;
  if (process.platform === 'linux') return Boolean(process.env.DISPLAY || process.env.WAYLAND_DISPLAY);
  return process.platform === 'darwin' || process.platform === 'win32';
}

function openBrowser(url: string): boolean {
  const [command, args] =
    process.platform === 'darwin'
      ? ['open', [url]]
      : process.platform === 'win32'
        ? ['rundll32', ['url.dll,FileProtocolHandler', url]]
        : ['xdg-open', [url]];
  try {
    const child = spawn(command, args, { stdio: 'ignore', detached: true });
    // A missing opener is not fatal: the URL is printed as well.
    child.on('error', () => undefined);
    child.unref();
    return true;
  } catch {
    return false;
  }
}
