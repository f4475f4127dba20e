// `loadout optimize …`: every step of the tool-description optimization loop from the shell —
// report (table, JSON, self-contained HTML), run (evaluation with a progress bar), and the rest.
// Works on the same state.json as a running gateway, which picks up promotions by watching it.
import { readFile, writeFile } from 'node:fs/promises';
import { Command, InvalidArgumentError, Option } from 'commander';
import * as z from 'zod';
import type { CatalogStore } from '../../catalog/index.js';
import { BackendKindSchema, PromptInputSchema, type BackendKind, type OptimizationSettings } from '../../config/index.js';
import { openRuntime } from '../../runtime/index.js';
import {
  createBackend,
  generateCandidates,
  generateGoldenPrompts,
  renderReportHtml,
  runEvaluation,
  type ModelBackend,
  type OptimizationLoop,
} from '../../optimization/index.js';
import { LoadoutError, errorMessage, firstIssue } from '../../shared/index.js';
import { formatReportTable, formatResultsTable } from '../optimizeOutput.js';
import { progressBar } from '../output.js';
import { commandEnvironment, openCommandStore } from '../program.js';

// Seed 002's GoldenPrompt array; id, toolName and expectedBehavior may be left out.
const PromptFileSchema = z.array(PromptInputSchema).min(1);

interface BackendFlags {
  backend?: BackendKind;
  baseUrl?: string;
  model?: string;
  apiKeyEnv?: string;
  timeout?: number;
  command?: string[];
}

/** Register `optimize` and its subcommands. */
export function registerOptimize(program: Command): void {
  const optimize = program
    .command('optimize')
    .description('tool-description optimization: candidates, golden prompts, evaluation, promotion');

  optimize
    .command('report')
    .description('per tool: optimized or not, metrics before → after')
    .option('--server <name>', 'only this server')
    .option('--json', 'print the report as JSON')
    .option('--html <file>', 'also write a self-contained HTML report')
    .action(async (options: { server?: string; json?: boolean; html?: string }, command: Command) => {
      await withLoop(command, [], async (loop) => {
        const reports = await loop.report(options.server);
        if (options.html) await writeFile(options.html, renderReportHtml(reports));
        print(
          options.json
            ? JSON.stringify({ reports }, null, 2)
            : formatReportTable(reports) + (options.html ? `\nHTML report written to ${options.html}` : ''),
        );
      });
    });

  withBackendFlags(optimize.command('run').argument('<server>').argument('<tool>'))
    .description('evaluate the baseline and candidates against the golden prompts through the model backend')
    .addOption(
      new Option('--candidates <ids>', 'comma-separated candidate ids')
        .default(undefined, 'all')
        .argParser((value: string) => value.split(',').filter(Boolean)),
    )
    .action(async (server: string, tool: string, options: BackendFlags & { candidates?: string[]; json?: boolean }, command: Command) => {
      await withLoop(command, [server], async (loop, catalog) => {
        const backend = backendFrom(loop.settings, options, tool);
        const bar = progressBar(process.stderr);
        const summary = await runEvaluation(loop, backend, catalog.current, {
          server,
          tool,
          candidateIds: options.candidates,
          onProgress: (step) => bar.update(step),
        }).finally(() => bar.done());
        const results = await loop.results(server, { tool });
        print(
          options.json
            ? JSON.stringify({ backend: backend.kind, ...summary, results }, null, 2)
            : `${summary.runs} runs in ${(summary.ms / 1000).toFixed(1)} s through ${backend.kind}.\n${formatResultsTable(results)}`,
        );
      });
    });

  optimize
    .command('canonical')
    .argument('<server>')
    .description("a server's original tool descriptions (captured once, kept after promotions)")
    .option('--json', 'JSON output (the default for this command)')
    .action(async (server: string, _options: unknown, command: Command) => {
      await withLoop(command, [server], async (loop) => print(JSON.stringify({ server, tools: await loop.canonical(server) }, null, 2)));
    });

  optimize
    .command('propose')
    .argument('<server>')
    .argument('<tool>')
    .argument('<description>', 'the rewritten description (at most 280 characters)')
    .option('--example <text>', 'an example call')
    .option('--force', 'store it even if the injection checks flag it')
    .option('--json', 'JSON output (the default for this command)')
    .description('store a candidate description')
    .action(async (server: string, tool: string, description: string, options: { example?: string; force?: boolean }, command: Command) => {
      await withLoop(command, [server], async (loop) => {
        const candidate = await loop.propose(server, tool, description, options);
        print(
          JSON.stringify({
            candidateId: candidate.id,
            charCount: candidate.charCount,
            ...(candidate.flags ? { flags: candidate.flags } : {}),
          }),
        );
      });
    });

  optimize
    .command('prompts')
    .argument('<server>')
    .argument('<tool>')
    .requiredOption('--file <json>', 'a JSON array of {id?, toolName?, category, prompt, expectedBehavior?}')
    .option('--json', 'JSON output (the default for this command)')
    .description("replace a tool's golden prompts from a JSON file")
    .action(async (server: string, tool: string, options: { file: string }, command: Command) => {
      const inputs = await readPromptFile(options.file);
      await withLoop(command, [server], async (loop) => {
        const prompts = await loop.savePrompts(server, tool, inputs);
        print(JSON.stringify({ saved: prompts.length, promptIds: prompts.map((p) => p.id) }));
      });
    });

  optimize
    .command('results')
    .argument('<server>')
    .option('--tool <name>', 'only this tool')
    .option('--json', 'print as JSON')
    .description('metrics per candidate beside the canonical baseline')
    .action(async (server: string, options: { tool?: string; json?: boolean }, command: Command) => {
      await withLoop(command, [], async (loop) => {
        const results = await loop.results(server, { tool: options.tool });
        print(options.json ? JSON.stringify({ server, tools: results }, null, 2) : formatResultsTable(results));
      });
    });

  optimize
    .command('promote')
    .argument('<server>')
    .argument('<tool>')
    .argument('<candidate-id>')
    .option('--force', 'promote even if thresholds or safety checks fail')
    .option('--json', 'machine-readable output')
    .description('make a candidate the live description (refused below the thresholds)')
    .action(async (server: string, tool: string, candidateId: string, options: { force?: boolean; json?: boolean }, command: Command) => {
      await withLoop(command, [server], async (loop) => {
        const { verdict, results, baseline } = await loop.promote(server, tool, candidateId, options.force);
        // The shape of the promote_candidate meta-tool's answer.
        if (options.json) {
          const forced = verdict.failures.length ? { forced: true, failures: verdict.failures } : {};
          print(
            JSON.stringify(
              {
                promoted: true,
                tool: `${server}.${tool}`,
                candidateId,
                description: results.description,
                metrics: results.metrics,
                baseline: baseline.metrics,
                ...forced,
              },
              null,
              2,
            ),
          );
          return;
        }
        print(
          `Promoted ${candidateId} for ${server}.${tool}${verdict.failures.length ? ` (forced past: ${verdict.failures.join('; ')})` : ''}: ${results.description}`,
        );
      });
    });

  optimize
    .command('revert')
    .argument('<server>')
    .argument('<tool>')
    .option('--json', 'machine-readable output')
    .description('restore the canonical description')
    .action(async (server: string, tool: string, options: { json?: boolean }, command: Command) => {
      await withLoop(command, [], async (loop) => {
        const description = await loop.revert(server, tool);
        // The shape of the revert_optimization meta-tool's answer.
        print(
          options.json
            ? JSON.stringify({ reverted: true, tool: `${server}.${tool}`, description }, null, 2)
            : `Reverted ${server}.${tool} to: ${description}`,
        );
      });
    });

  withBackendFlags(optimize.command('generate-candidates').argument('<server>').argument('<tool>'))
    .option('--count <n>', 'how many (1–10)', intIn(1, 10), 4)
    .description('have the model backend write candidate descriptions')
    .action(async (server: string, tool: string, options: BackendFlags & { count: number }, command: Command) => {
      await withLoop(command, [server], async (loop) => {
        const result = await generateCandidates(loop, backendFrom(loop.settings, options, tool), server, tool, options.count);
        print(
          JSON.stringify(
            {
              candidates: result.candidates.map((c) => ({ candidateId: c.id, charCount: c.charCount, description: c.description })),
              rejected: result.rejected,
            },
            null,
            2,
          ),
        );
      });
    });

  withBackendFlags(optimize.command('generate-prompts').argument('<server>').argument('<tool>'))
    .option('--direct <n>', 'direct prompts (0–20)', intIn(0, 20), 5)
    .option('--indirect <n>', 'indirect prompts (0–20)', intIn(0, 20), 5)
    .option('--negative <n>', 'negative prompts (0–20)', intIn(0, 20), 5)
    .description('have the model backend write golden prompts')
    .action(
      async (
        server: string,
        tool: string,
        options: BackendFlags & { direct: number; indirect: number; negative: number },
        command: Command,
      ) => {
        await withLoop(command, [server], async (loop) => {
          const counts = { direct: options.direct, indirect: options.indirect, negative: options.negative };
          const prompts = await generateGoldenPrompts(loop, backendFrom(loop.settings, options, tool), server, tool, counts);
          print(
            JSON.stringify(
              { saved: prompts.length, prompts: prompts.map((p) => ({ promptId: p.id, category: p.category, prompt: p.prompt })) },
              null,
              2,
            ),
          );
        });
      },
    );
}

// Every backend servers.yaml can configure, with every option it takes (optimization.*).
function withBackendFlags(command: Command): Command {
  return command
    .addOption(new Option('--backend <kind>', 'model backend (overrides servers.yaml)').choices(BackendKindSchema.options))
    .option('--base-url <url>', 'openai: OpenAI-compatible endpoint, e.g. http://127.0.0.1:11434/v1')
    .option('--model <name>', 'openai: model name for the endpoint')
    .option('--api-key-env <var>', 'openai: name of the variable holding the API key')
    .option(
      '--command <argv>',
      'command: the argv as a JSON array, e.g. \'["my-agent", "-p", "{prompt}"]\' ({prompt}, {system}, {tools_file}, {tool})',
      commandArgv,
    )
    .option('--timeout <seconds>', 'per-request timeout', intIn(1, 3600))
    .option('--json', 'machine-readable output (generate-*: always JSON)');
}

function commandArgv(value: string): string[] {
  let parsed: unknown;
  try {
    parsed = JSON.parse(value);
  } catch {
    parsed = undefined;
  }
  if (!Array.isArray(parsed) || parsed.length === 0 || !parsed.every((part) => typeof part === 'string')) {
    throw new InvalidArgumentError(
      `--command takes the argv as a JSON array of strings, e.g. '["my-agent", "-p", "{prompt}"]'; got ${value}`,
    );
  }
  return parsed;
}

function backendFrom(settings: OptimizationSettings, flags: BackendFlags, toolName: string): ModelBackend {
  const merged: OptimizationSettings = {
    ...settings,
    ...(flags.baseUrl ? { base_url: flags.baseUrl } : {}),
    ...(flags.model ? { model: flags.model } : {}),
    ...(flags.apiKeyEnv ? { api_key_env: flags.apiKeyEnv } : {}),
    ...(flags.timeout ? { timeout_seconds: flags.timeout } : {}),
    ...(flags.command ? { command: flags.command } : {}),
  };
  const kind = flags.backend ?? (flags.baseUrl ? 'openai' : flags.command ? 'command' : undefined);
  if (kind === 'sampling') {
    throw new LoadoutError(
      'BACKEND_NOT_CONFIGURED',
      'The sampling backend borrows the model of a connected MCP client, and the CLI has none: run the step from your agent (generate_candidates, generate_golden_prompts, run_evaluation with optimization.expose_tools: true), or choose --backend openai or --backend command here.',
    );
  }
  return createBackend({ settings: merged, kind, toolName });
}

// The loop over the data dir's state and cached catalog; servers named in `discover` that have no
// cached tools are discovered first (started, listed, stopped), as `serve` would.
async function withLoop(
  command: Command,
  discover: string[],
  task: (loop: OptimizationLoop, catalog: CatalogStore) => Promise<void>,
): Promise<void> {
  const { paths, logger, storeUrl } = commandEnvironment(command);
  const store = await openCommandStore(storeUrl, logger);
  const runtime = await openRuntime({ paths, logger, ...(store ? { store } : {}) });
  const { catalog, optimization } = runtime;
  try {
    await catalog.ensureLoaded();
    const missing = discover.filter((server) => catalog.undiscoveredServers.includes(server));
    if (missing.length) {
      const [result] = await catalog.discover(missing);
      if (result && !result.ok)
        throw new LoadoutError('SERVER_START_FAILED', `Could not discover '${result.server}': ${result.failure.text}`);
    }
    await task(optimization, catalog);
  } finally {
    await runtime.close();
  }
}

async function readPromptFile(file: string): Promise<z.infer<typeof PromptFileSchema>> {
  let json: unknown;
  try {
    json = JSON.parse(await readFile(file, 'utf8'));
  } catch (error) {
    throw new LoadoutError(
      'INVALID_ARGUMENT',
      `${file} is not readable JSON (${errorMessage(error)}); it should be an array of {category, prompt}.`,
    );
  }
  const parsed = PromptFileSchema.safeParse(json);
  if (!parsed.success) {
    const { path, message } = firstIssue(parsed.error);
    throw new LoadoutError('INVALID_ARGUMENT', `${file}: ${path}: ${message}`);
  }
  return parsed.data;
}

function intIn(min: number, max: number): (value: string) => number {
  return (value) => {
    const number = Number(value);
    if (!Number.isInteger(number) || number < min || number > max)
      throw new InvalidArgumentError(`expected a whole number from ${min} to ${max}, got '${value}'.`);
    return number;
  };
}

function print(text: string): void {
  process.stdout.write(`${text}\n`);
}
