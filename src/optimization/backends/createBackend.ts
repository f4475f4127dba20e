// Chooses and builds the model backend from servers.yaml `optimization:` (plus command-line or
// meta-tool overrides); without one, the error says how to configure it.
import type { BackendKind, OptimizationSettings } from '../../config/index.js';
import { LoadoutError } from '../../shared/index.js';
import { CommandBackend } from './commandBackend.js';
import type { ModelBackend } from './modelBackend.js';
import { OpenAiBackend } from './openaiBackend.js';
import { SamplingBackend, type SamplingPort } from './samplingBackend.js';

/** What a backend can be built from. */
interface BackendSources {
  settings: OptimizationSettings;
  /** Overrides the configured backend kind (a flag or a meta-tool argument). */
  kind?: BackendKind;
  /** The connected client's sampling, when it declared the capability. */
  sampling?: SamplingPort;
  env?: NodeJS.ProcessEnv;
  /** The tool under evaluation, for the command template's `{tool}`. */
  toolName?: string;
}

// The servers.yaml section comes last and alone on its lines, so it pastes as it is and works
// with a local Ollama as pasted. Sampling is not offered: with a client that supports it, it is
// already the default, and the CLI has none.
const HOW_TO_CONFIGURE =
  'Add this to servers.yaml for a local OpenAI-compatible endpoint such as Ollama (for one that needs a key, add ' +
  'api_key_env: the name of the variable holding it; or use backend: command with command: [argv…] to run a program per prompt):\n' +
  'optimization:\n  backend: openai\n  base_url: http://127.0.0.1:11434/v1\n  model: qwen2.5:7b-instruct';

/** The backend to use: the explicit kind, else the configured one, else sampling when the client offers it. */
export function createBackend(sources: BackendSources): ModelBackend {
  const { settings } = sources;
  const kind = sources.kind ?? settings.backend ?? (sources.sampling ? 'sampling' : undefined);
  const timeoutMs = settings.timeout_seconds * 1000;
  switch (kind) {
    case undefined:
      throw new LoadoutError('BACKEND_NOT_CONFIGURED', `No model backend is configured. ${HOW_TO_CONFIGURE}`);
    case 'sampling':
      if (!sources.sampling)
        throw new LoadoutError(
          'BACKEND_NOT_CONFIGURED',
          `The sampling backend borrows the model of a connected MCP client that declared the sampling capability, and there is none here. ${HOW_TO_CONFIGURE}`,
        );
      return new SamplingBackend(sources.sampling, timeoutMs);
    case 'openai': {
      if (!settings.base_url || !settings.model)
        throw new LoadoutError(
          'BACKEND_NOT_CONFIGURED',
          `The openai backend needs optimization.base_url and optimization.model. ${HOW_TO_CONFIGURE}`,
        );
      const env = sources.env ?? process.env;
      const apiKey = settings.api_key_env ? env[settings.api_key_env] : undefined;
      if (settings.api_key_env && !apiKey)
        throw new LoadoutError(
          'BACKEND_NOT_CONFIGURED',
          `optimization.api_key_env names ${settings.api_key_env}, but it is not set; export it or remove api_key_env for a keyless local endpoint.`,
        );
      return new OpenAiBackend({ baseUrl: settings.base_url, model: settings.model, apiKey, timeoutMs });
    }
    case 'command':
      if (!settings.command)
        throw new LoadoutError(
          'BACKEND_NOT_CONFIGURED',
          `The command backend needs optimization.command (an argv list using {prompt}, {system}, {tools_file}, {tool}). ${HOW_TO_CONFIGURE}`,
        );
      return new CommandBackend({ template: settings.command, timeoutMs, toolName: sources.toolName });
  }
}
