// run-code: the agent's script, run in a sandboxed interpreter (codeMode/), calling catalog tools
// and searching the catalog without passing every intermediate result through the model. Each
// callTool is a call-tool call made through the session's router, so policy, rate limits, the
// audit trail and telemetry see it as they see any other; only the script's answer comes back.
import type { CallToolResult } from '@modelcontextprotocol/server';
import * as z from 'zod';
import type { CodeModeSettings } from '../../config/index.js';
import { LoadoutError, firstIssueText } from '../../shared/index.js';
import type { CodeOutcome } from '../codeMode/index.js';
import { errorResult } from '../toolResults.js';
import { checkServer, detailOf, foundTools } from './catalogTools.js';
import { REACHES_ANY_TOOL, defineMetaTool, type MetaToolContext } from './metaTool.js';

const CALL_TOOL = 'call-tool';
const SEARCH_PAGE = 10;

/** What a script's search() takes besides its query. */
const SearchOptionsSchema = z.strictObject({
  server: z.string().optional(),
  limit: z.number().int().min(1).max(50).default(SEARCH_PAGE),
});

/** run-code: a JavaScript script with callTool, search and console.log; its return value is the answer. */
export const runCode = defineMetaTool({
  name: 'run-code',
  annotations: REACHES_ANY_TOOL,
  description:
    'Run a JS async function body: await callTool("server.tool", args), await search(query, {server, limit}), console.log; only its return value reaches you.',
  input: z.strictObject({
    code: z.string().min(1).max(200_000),
    timeout_ms: z.number().int().min(1).optional(),
  }),
  example: { code: 'const r = await callTool("memory.read_graph", {}); return r.content[0].text.length;' },
  async run(args, context) {
    const settings = context.gateway.settings.code_mode;
    // Loaded on the first run only: a gateway that never runs a script never starts a worker.
    const { runScript } = await import('../codeMode/index.js');
    const limits = {
      timeoutMs: Math.min(args.timeout_ms ?? settings.timeout_ms, settings.timeout_ms),
      memoryBytes: settings.memory_mb * 2 ** 20,
      maxCalls: settings.max_calls,
    };
    const host = {
      callTool: (name: string, toolArgs: unknown, signal: AbortSignal) => callThroughRouter(context, name, toolArgs, signal),
      search: (query: string, options: unknown) => searchCatalog(context, query, options),
    };
    return answerOf(await runScript(args.code, limits, host, context.extra.mcpReq.signal), settings);
  },
});

// A call-tool call of `name`, made as the client would make it, on a request whose cancellation is
// the client's and the run's end both.
function callThroughRouter(context: MetaToolContext, name: string, args: unknown, ended: AbortSignal): Promise<CallToolResult> {
  if (args === null || typeof args !== 'object' || Array.isArray(args))
    throw new LoadoutError('INVALID_ARGUMENT', `callTool("${name}", args): args must be an object`);
  const { extra } = context;
  const signal = AbortSignal.any([extra.mcpReq.signal, ended]);
  return context.session.callAsClient(CALL_TOOL, { tool: name, arguments: args }, { ...extra, mcpReq: { ...extra.mcpReq, signal } });
}

// search(query, {server, limit}): the tools discover-all-tools would rank for it, each with its schemas.
async function searchCatalog({ gateway, session }: MetaToolContext, query: string, options: unknown): Promise<unknown> {
  const parsed = SearchOptionsSchema.safeParse(options);
  if (!parsed.success) throw new LoadoutError('INVALID_ARGUMENT', `search("${query}", options): ${firstIssueText(parsed.error)}`);
  await gateway.ready();
  checkServer(gateway, parsed.data.server);
  const { tools } = await foundTools(gateway, session, { query, ...parsed.data, offset: 0 });
  return tools.map((tool) => detailOf(tool, undefined));
}

/** The run's answer: its return value as JSON, then its console lines, within max_answer_bytes; a failure is an isError result. */
function answerOf(outcome: CodeOutcome, settings: CodeModeSettings): CallToolResult {
  const logged = outcome.logs.length
    ? `console.log (${outcome.logs.length} line${outcome.logs.length === 1 ? '' : 's'}):\n${outcome.logs.join('\n')}`
    : '';
  if (outcome.kind === 'failed') {
    const head = `run-code stopped: ${outcome.message} (after ${outcome.calls} call${outcome.calls === 1 ? '' : 's'}). Nothing of this run is kept; a new run starts fresh.`;
    return errorResult(cut([head, logged].filter(Boolean).join('\n'), settings.max_answer_bytes));
  }
  const answer = cut(outcome.json, settings.max_answer_bytes);
  const left = settings.max_answer_bytes - Buffer.byteLength(answer);
  const content: CallToolResult['content'] = [{ type: 'text', text: answer }];
  if (logged) content.push({ type: 'text', text: cut(logged, Math.max(left, 0)) });
  return { content };
}

// `text` within `limit` bytes; a longer one is cut, with a notice saying by how much and what to do.
function cut(text: string, limit: number): string {
  const bytes = Buffer.byteLength(text);
  if (bytes <= limit) return text;
  const notice = `\n… [cut: ${bytes} bytes, over run-code's limit of ${limit} (gateway.code_mode.max_answer_bytes); return less]`;
  const kept = Buffer.from(text).subarray(0, Math.max(limit - Buffer.byteLength(notice), 0));
  // A character split by the cut is dropped, not shown as a replacement character.
  return kept.toString('utf8').replace(/\uFFFD$/, '') + notice;
}
