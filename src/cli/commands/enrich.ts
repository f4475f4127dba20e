// `loadout enrich`: has the optimization's model backend (servers.yaml `optimization:`, or
// the flags) write a few example user requests per tool, stored by tool hash in the data dir and
// searched as a field (doc2query). Tools already enriched are skipped, so an interrupted run
// resumes; a changed tool has a new hash and is enriched again. In store mode the tools come from
// the store; the requests still go to the data dir (the store does not hold them).
import { BackendKindSchema } from '../../config/index.js';
import { Option, type Command } from 'commander';
import { ExampleRequestsStore, toolHash, type CatalogTool } from '../../catalog/index.js';
import { createBackend, type ModelBackend } from '../../optimization/index.js';
import { LoadoutError, errorMessage, isLoadoutError, oneLine } from '../../shared/index.js';
import { loadConfigView, requireServer } from '../configView.js';
import { printJson, printLines, printNote, progressBar } from '../output.js';
import { commandEnvironment, withCommandStore } from '../program.js';

const SYSTEM = 'You write what users type to an AI assistant. Answer with a JSON array of strings and nothing else.';

/** Register `enrich` on the program. */
export function registerEnrich(program: Command): void {
  program
    .command('enrich')
    .description('have a model write example requests for each tool, which search and discover-all-tools then match (resumable)')
    .option('--server <server>', "only this server's tools")
    .option('--per-tool <n>', 'requests per tool (1–10)', '5')
    .addOption(
      new Option('--backend <kind>', 'model backend (overrides servers.yaml optimization.backend)').choices(
        BackendKindSchema.options.filter((kind) => kind !== 'sampling'),
      ),
    )
    .option('--json', 'machine-readable output')
    .action(async (options: { server?: string; perTool: string; backend?: 'openai' | 'command'; json?: boolean }, command: Command) => {
      const perTool = Number(options.perTool);
      if (!Number.isInteger(perTool) || perTool < 1 || perTool > 10)
        throw new LoadoutError('INVALID_ARGUMENT', `--per-tool must be a whole number from 1 to 10, got '${options.perTool}'`);
      const { paths, logger, storeUrl } = commandEnvironment(command);
      const view = await withCommandStore(storeUrl, logger, (store) => loadConfigView(paths, store));
      // The store holds no example requests: they are this data dir's, which a replica started with it searches.
      if (storeUrl)
        printNote(
          `store mode: tools are read from the store, example requests kept in this data dir (${paths.exampleRequestsFile}), which only a replica started with it searches; run enrich with each replica's --data, or copy the file`,
        );
      if (options.server !== undefined) requireServer(view.config, options.server);
      const store = new ExampleRequestsStore(paths.exampleRequestsFile);
      const done = await store.read();
      const tools = view.catalog.visible().filter((tool) => options.server === undefined || tool.server === options.server);
      const todo = tools.filter((tool) => !done.has(toolHash(tool.definition)));
      if (!todo.length) {
        if (options.json) printJson({ tools: tools.length, alreadyDone: tools.length, written: 0, failed: 0 });
        else printLines(`All ${tools.length} tools already have example requests.`);
        return;
      }
      const progress = progressBar(process.stderr);
      let failed = 0;
      try {
        for (const [index, tool] of todo.entries()) {
          progress.update({ done: index, total: todo.length, message: `enrich ${index}/${todo.length} ${tool.id}` });
          const backend = createBackend({ settings: view.config.optimization, kind: options.backend, toolName: tool.id });
          try {
            await store.save(toolHash(tool.definition), await exampleRequests(backend, tool, perTool));
          } catch (error) {
            // The backend itself is unusable: stop here; what is saved stays, the next run resumes.
            if (isLoadoutError(error, 'BACKEND_UNAVAILABLE', 'BACKEND_NOT_CONFIGURED')) throw error;
            failed++;
            printNote(`${tool.id}: ${errorMessage(error)}`);
          }
        }
      } finally {
        progress.done();
      }
      if (options.json) printJson({ tools: tools.length, alreadyDone: tools.length - todo.length, written: todo.length - failed, failed });
      else
        printLines(
          `Wrote example requests for ${todo.length - failed} of ${todo.length} tools (${tools.length - todo.length} already done${failed ? `, ${failed} failed: run again to retry` : ''}).`,
        );
    });
}

async function exampleRequests(backend: ModelBackend, tool: CatalogTool, count: number): Promise<string[]> {
  const user =
    `A tool an assistant can use:\nname: ${tool.id}\ndescription: ${tool.description}\n\n` +
    `Write ${count} different short requests a user might type when they need this tool, in everyday words, ` +
    "as people really ask, mostly without the tool's own words. Answer with a JSON array of strings only.";
  const text = await backend.complete(SYSTEM, user);
  const start = text.indexOf('[');
  const end = text.lastIndexOf(']');
  let parsed: unknown;
  try {
    parsed = start >= 0 && end > start ? JSON.parse(text.slice(start, end + 1)) : undefined;
  } catch {
    parsed = undefined;
  }
  const requests = Array.isArray(parsed)
    ? parsed.filter((item): item is string => typeof item === 'string' && item.trim() !== '').map((item) => item.trim().slice(0, 300))
    : [];
  if (!requests.length)
    throw new LoadoutError('BACKEND_REPLY_INVALID', `the model did not answer with a JSON array of requests: "${oneLine(text, 100)}"`);
  return requests.slice(0, count);
}
