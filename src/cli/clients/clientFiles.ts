// Where each MCP client keeps its servers, per its documentation: the files, the JSON path of the
// servers map in each, and the place `loadout setup` adds loadout. Pure data; reads nothing.
import path from 'node:path';

/** The clients `loadout setup` and `loadout doctor` know. */
export const CLIENT_NAMES = ['claude-code', 'claude-desktop', 'codex', 'cursor', 'gemini', 'vscode'] as const;
/** One of CLIENT_NAMES. */
export type ClientName = (typeof CLIENT_NAMES)[number];

/** One servers map in one client file. */
export interface ServersLocation {
  /** How the human knows it, e.g. "Claude Code user scope (~/.claude.json)". */
  label: string;
  file: string;
  /** JSON path of the map of servers inside the file. */
  jsonPath: string[];
  /** VS Code's files allow comments and trailing commas; the others are plain JSON. */
  comments: boolean;
  /** Codex CLI's file is TOML (the servers map is its `[mcp_servers.*]` tables). */
  toml?: boolean;
}

/** A client: where its servers are, and where loadout goes. */
export interface ClientDefinition {
  name: ClientName;
  title: string;
  /** Every servers map this client would load for `cwd`, in its own order of precedence. */
  locations: ServersLocation[];
  /** Where loadout is added (a user-wide location, so every project gets it). */
  target: ServersLocation;
  /** VS Code requires `"type": "stdio"` on a command server; the others infer it. */
  stdioType: boolean;
  /**
   * Claude Code defers MCP tools behind its own tool search; `"alwaysLoad": true` on loadout's
   * entry sends loadout's few tools to the model in full (and waits up to 5 s for it at start).
   */
  alwaysLoad: boolean;
  /** What the client needs besides loadout's entry, said after setup (docs/clients.md). */
  needs?: string;
}

/** The machine facts the locations depend on; tests pass a temporary home. */
export interface ClientEnvironment {
  home: string;
  cwd: string;
  platform: NodeJS.Platform;
  /** %APPDATA% on Windows. */
  appData?: string;
  /** $CODEX_HOME: where Codex CLI keeps config.toml instead of ~/.codex. */
  codexHome?: string;
}

function appSupportDir(env: ClientEnvironment, app: string): string {
  if (env.platform === 'darwin') return path.join(env.home, 'Library', 'Application Support', app);
  if (env.platform === 'win32') return path.join(env.appData ?? path.join(env.home, 'AppData', 'Roaming'), app);
  return path.join(env.home, '.config', app);
}

/** The definition of `name` on this machine. */
export function clientDefinition(name: ClientName, env: ClientEnvironment): ClientDefinition {
  const cwd = path.resolve(env.cwd);
  switch (name) {
    case 'claude-code': {
      // Claude Code's scopes: user = top-level mcpServers of ~/.claude.json, local = that file's
      // projects[<project path>].mcpServers, project = .mcp.json at the project root.
      const claudeJson = path.join(env.home, '.claude.json');
      const user: ServersLocation = {
        label: 'Claude Code user scope (~/.claude.json)',
        file: claudeJson,
        jsonPath: ['mcpServers'],
        comments: false,
      };
      return {
        name,
        title: 'Claude Code',
        locations: [
          {
            label: `Claude Code local scope (~/.claude.json, project ${cwd})`,
            file: claudeJson,
            jsonPath: ['projects', cwd, 'mcpServers'],
            comments: false,
          },
          { label: 'Claude Code project scope (.mcp.json)', file: path.join(cwd, '.mcp.json'), jsonPath: ['mcpServers'], comments: false },
          user,
        ],
        target: user,
        stdioType: false,
        alwaysLoad: true,
      };
    }
    case 'claude-desktop': {
      const file: ServersLocation = {
        label: 'Claude Desktop (claude_desktop_config.json)',
        file: path.join(appSupportDir(env, 'Claude'), 'claude_desktop_config.json'),
        jsonPath: ['mcpServers'],
        comments: false,
      };
      return { name, title: 'Claude Desktop', locations: [file], target: file, stdioType: false, alwaysLoad: false };
    }
    case 'cursor':
      return projectAndUser(name, 'Cursor', false, {
        project: {
          label: 'Cursor project (.cursor/mcp.json)',
          file: path.join(cwd, '.cursor', 'mcp.json'),
          jsonPath: ['mcpServers'],
          comments: false,
        },
        user: {
          label: 'Cursor global (~/.cursor/mcp.json)',
          file: path.join(env.home, '.cursor', 'mcp.json'),
          jsonPath: ['mcpServers'],
          comments: false,
        },
      });
    case 'codex': {
      // Codex CLI reads $CODEX_HOME/config.toml, ~/.codex by default.
      const codexFile = path.join(env.codexHome ? path.resolve(cwd, env.codexHome) : path.join(env.home, '.codex'), 'config.toml');
      const file: ServersLocation = {
        label: `Codex CLI (${env.codexHome ? codexFile : '~/.codex/config.toml'})`,
        file: codexFile,
        jsonPath: ['mcp_servers'],
        comments: false,
        toml: true,
      };
      return {
        name,
        title: 'Codex CLI',
        locations: [file],
        target: file,
        stdioType: false,
        alwaysLoad: false,
        needs:
          'Codex CLI runs loadout\'s meta-tools unasked (they are annotated read-only or non-destructive). call-tool can reach any tool, so Codex asks before it; to let it run unattended, add default_tools_approval_mode = "approve" under [mcp_servers.loadout]. Codex does not re-read its tool list after an equip unless its list-change feature is on (codex --enable mcp_tool_list_changed, or mcp_tool_list_changed = true under [features]); without it the agent reaches equipped tools through call-tool.',
      };
    }
    case 'gemini':
      // Gemini CLI merges ~/.gemini/settings.json with the project's .gemini/settings.json.
      return {
        ...projectAndUser(name, 'Gemini CLI', false, {
          project: {
            label: 'Gemini CLI project (.gemini/settings.json)',
            file: path.join(cwd, '.gemini', 'settings.json'),
            jsonPath: ['mcpServers'],
            comments: false,
          },
          user: {
            label: 'Gemini CLI user (~/.gemini/settings.json)',
            file: path.join(env.home, '.gemini', 'settings.json'),
            jsonPath: ['mcpServers'],
            comments: false,
          },
        }),
        needs:
          'Gemini CLI re-reads its tool list after an equip by itself: no setting is needed. It asks before each tool call unless you trust the server ("trust": true on its entry) or run with --yolo; call-tool can reach any tool, so trust loadout only if you trust every server behind it.',
      };
    case 'vscode':
      // VS Code keeps servers under "servers" (not "mcpServers"), in the user profile's mcp.json
      // and in the workspace's .vscode/mcp.json.
      return projectAndUser(name, 'VS Code', true, {
        project: {
          label: 'VS Code workspace (.vscode/mcp.json)',
          file: path.join(cwd, '.vscode', 'mcp.json'),
          jsonPath: ['servers'],
          comments: true,
        },
        user: {
          label: 'VS Code user profile (mcp.json)',
          file: path.join(appSupportDir(env, 'Code'), 'User', 'mcp.json'),
          jsonPath: ['servers'],
          comments: true,
        },
      });
  }
}

// A client with a project file and a user file, the project one first; loadout goes in the user one.
function projectAndUser(
  name: ClientName,
  title: string,
  stdioType: boolean,
  files: { project: ServersLocation; user: ServersLocation },
): ClientDefinition {
  return { name, title, locations: [files.project, files.user], target: files.user, stdioType, alwaysLoad: false };
}

/** The environment of this process (HOME, cwd, platform, APPDATA, CODEX_HOME; an empty variable is unset). */
export function currentClientEnvironment(home: string): ClientEnvironment {
  const { APPDATA: appData, CODEX_HOME: codexHome } = process.env;
  return { home, cwd: process.cwd(), platform: process.platform, appData, ...(codexHome ? { codexHome } : {}) };
}
