// The checks behind `loadout doctor`: the config and data dirs, servers.yaml, and each server —
// its ${VAR}s set, does it start, how many tools, does it want authorization, is it also listed
// directly in an MCP client. Each check gives findings; it prints nothing and changes no file.
import { constants } from 'node:fs';
import { access, stat } from 'node:fs/promises';
import path from 'node:path';
import pLimit from 'p-limit';
import { convertServer, loadServersFile, unsetEnvReferences, type LoadoutPaths, type ServerConfig } from '../config/index.js';
import { isNeedsAuthorizationMessage } from '../downstream/index.js';
import { openRuntime } from '../gateway/index.js';
import { errorMessage, oneLine, type Logger } from '../shared/index.js';
import { CLIENT_NAMES, clientDefinition, type ClientEnvironment } from './clients/clientFiles.js';
import { readJsonFile, valueAt } from './clients/jsonFile.js';
import { findSameServer } from './clients/setupPlan.js';

/** One line of the doctor's report: what was looked at, whether it is well, and the fix if not. */
export interface Finding {
  subject: string;
  ok: boolean;
  message: string;
  fix?: string;
}

/** Run every check; servers are started (a few at a time) and stopped again. */
export async function runDoctor(
  paths: LoadoutPaths,
  clientEnv: ClientEnvironment,
  logger: Logger,
  env: NodeJS.ProcessEnv = process.env,
): Promise<Finding[]> {
  const findings = [await checkDir('config dir', paths.configDir), await checkDir('data dir', paths.dataDir)];
  let servers: Record<string, ServerConfig>;
  try {
    const loaded = await loadServersFile(paths.serversFile);
    if (!loaded.exists) {
      findings.push({
        subject: 'servers.yaml',
        ok: false,
        message: `${paths.serversFile} does not exist`,
        fix: 'run "loadout setup <client>" or "loadout init" to import your servers',
      });
      return findings;
    }
    servers = loaded.config.servers;
    findings.push({
      subject: 'servers.yaml',
      ok: true,
      message: `${paths.serversFile}: ${Object.keys(servers).length} server${Object.keys(servers).length === 1 ? '' : 's'}`,
    });
  } catch (error) {
    findings.push({ subject: 'servers.yaml', ok: false, message: errorMessage(error), fix: `correct ${paths.serversFile}` });
    return findings;
  }
  findings.push(...(await checkServers(paths, logger, env)));
  findings.push(...(await checkClients(servers, clientEnv)));
  return findings;
}

async function checkDir(subject: string, dir: string): Promise<Finding> {
  try {
    if (!(await stat(dir)).isDirectory())
      return { subject, ok: false, message: `${dir} is not a directory`, fix: `move it away; loadout needs ${dir} as a directory` };
    await access(dir, constants.W_OK);
    return { subject, ok: true, message: dir };
  } catch (error) {
    const code = (error as NodeJS.ErrnoException).code;
    if (code === 'EACCES' || code === 'EPERM')
      return { subject, ok: false, message: `${dir} is not writable`, fix: `give your user write access to ${dir}` };
    if (code !== 'ENOENT') return { subject, ok: false, message: `${dir}: ${errorMessage(error)}`, fix: 'check the path' };
    // Missing is fine when loadout can create it: the nearest existing parent must be writable.
    let parent = path.dirname(dir);
    while (parent !== path.dirname(parent) && !(await exists(parent))) parent = path.dirname(parent);
    const writable = await access(parent, constants.W_OK).then(
      () => true,
      () => false,
    );
    return writable
      ? { subject, ok: true, message: `${dir} (created on first use)` }
      : {
          subject,
          ok: false,
          message: `${dir} does not exist and ${parent} is not writable`,
          fix: `create ${dir}, or pass --${subject.split(' ')[0]} DIR`,
        };
  }
}

async function exists(file: string): Promise<boolean> {
  return stat(file).then(
    () => true,
    () => false,
  );
}

function unsetVariables(config: ServerConfig, env: NodeJS.ProcessEnv): string[] {
  const texts =
    config.type === 'stdio'
      ? [config.command, ...config.args, ...Object.values(config.env), config.cwd ?? '']
      : [config.url, ...Object.values(config.headers)];
  return [...new Set(texts.flatMap((text) => unsetEnvReferences(text, env)))];
}

// An HTTP server that answers 401/403 wants credentials (the SDK's messages carry the status).
const NEEDS_AUTHORIZATION = /\b(401|403)\b|unauthori[sz]ed|invalid_token|refused loadout's credentials/i;

// Started through the runtime `serve` uses, so a server is checked as it would run there (OAuth tokens included).
async function checkServers(paths: LoadoutPaths, logger: Logger, env: NodeJS.ProcessEnv): Promise<Finding[]> {
  // A failing server is this command's own finding; its warn-level log lines would repeat it.
  const quiet = logger.level === 'warn' ? logger.child({}, { level: 'silent' }) : logger;
  const { pool, ...runtime } = await openRuntime({ paths, logger: quiet, env });
  const limit = pLimit(4);
  try {
    return await Promise.all(
      Object.entries(pool.configs).map(([name, config]) =>
        limit(async (): Promise<Finding> => {
          const subject = `server ${name}`;
          if (!config.enabled) return { subject, ok: true, message: 'disabled (enabled: false); not started' };
          const unset = unsetVariables(config, env);
          if (unset.length) {
            return {
              subject,
              ok: false,
              message: `uses ${unset.map((variable) => `\${${variable}}`).join(', ')}, not set`,
              fix: `set ${unset.join(', ')} in the environment loadout starts in (your shell, or the client's "env" for loadout), or write \${${unset[0]}:-default}`,
            };
          }
          const startedAt = performance.now();
          try {
            const tools = await pool.listTools(name);
            return {
              subject,
              ok: true,
              message: `starts, ${tools.length} tool${tools.length === 1 ? '' : 's'} listed (${Math.round(performance.now() - startedAt)} ms)`,
            };
          } catch (error) {
            const message = errorMessage(error);
            // A server that speaks OAuth is logged in to with `loadout auth`; one that does not wants a header.
            if (config.type !== 'stdio' && isNeedsAuthorizationMessage(message)) {
              return {
                subject,
                ok: false,
                message: `needs authorization: ${config.url} wants an OAuth login`,
                fix: `loadout auth ${name}`,
              };
            }
            if (config.type !== 'stdio' && NEEDS_AUTHORIZATION.test(message)) {
              return {
                subject,
                ok: false,
                message: `needs authorization: ${config.url} refused the connection (${oneLine(message, 120)})`,
                fix: `add the credentials under headers: (e.g. Authorization: "Bearer \${TOKEN}") for ${name} in servers.yaml`,
              };
            }
            const what = config.type === 'stdio' ? `command: ${[config.command, ...config.args].join(' ')}` : `url ${config.url}`;
            // The reason whole: a server's last stderr lines follow on lines of their own.
            const reason = message.replace(`Server '${name}' failed to start: `, '');
            return {
              subject,
              ok: false,
              message: `does not start: ${reason}`,
              fix: `check its ${what}${reason.includes('\n') ? '' : '; run it by hand to see its error'}`,
            };
          } finally {
            await pool.stopIfIdle(name);
          }
        }),
      ),
    );
  } finally {
    await runtime.close();
  }
}

async function checkClients(servers: Record<string, ServerConfig>, clientEnv: ClientEnvironment): Promise<Finding[]> {
  const findings: Finding[] = [];
  const seenFiles = new Set<string>();
  for (const name of CLIENT_NAMES) {
    const client = clientDefinition(name, clientEnv);
    for (const location of client.locations) {
      let data: unknown;
      try {
        data = (await readJsonFile(location.file, location.comments)).data;
      } catch (error) {
        if (!seenFiles.has(location.file))
          findings.push({
            subject: client.title,
            ok: false,
            message: errorMessage(error),
            fix: `correct ${location.file} (${client.title} cannot read it either)`,
          });
        seenFiles.add(location.file);
        continue;
      }
      const entries = valueAt(data, location.jsonPath);
      if (typeof entries !== 'object' || entries === null) continue;
      for (const [entryName, raw] of Object.entries(entries)) {
        const converted = convertServer(entryName, raw);
        const inLoadout = typeof converted === 'string' ? undefined : findSameServer(servers, converted);
        if (!inLoadout) continue;
        const alias = inLoadout === entryName ? '' : ` (as '${entryName}')`;
        findings.push({
          subject: `server ${inLoadout}`,
          ok: false,
          message: `listed both in ${location.label}${alias} and in loadout: the agent sees its tools twice`,
          fix: `loadout setup ${name} --move`,
        });
      }
    }
  }
  return findings;
}
