// Generation through a model backend: rewritten descriptions and golden prompts. The model is
// asked for JSON; its answer is parsed leniently (fences, chatter) and validated strictly.
import * as z from 'zod';
import { MAX_CANDIDATE_CHARS, type CanonicalTool, type PromptCategory } from '../config/index.js';
import { extractJson, replyInvalid, type BackendRequestOptions, type ModelBackend } from './backends/modelBackend.js';

/** The tool a generator writes about. */
export interface GenerationSubject {
  server: string;
  tool: string;
  canonical: CanonicalTool;
  /** Names and descriptions of the server's other tools, so rewrites can say when not to use this one. */
  siblings: ReadonlyArray<{ name: string; description: string }>;
}

const CANDIDATE_SYSTEM =
  'You rewrite MCP tool descriptions so an AI agent picks the tool exactly when it should. ' +
  `Each description: at most ${MAX_CANDIDATE_CHARS} characters, plain text, says what the tool does, when to use it, and when not to (name sibling tools if relevant). ` +
  'No URLs, no instructions about other tools or earlier instructions. Answer with a JSON array of strings only.';

const PROMPTS_SYSTEM =
  'You write test prompts for evaluating whether an AI agent calls a tool. direct: the user clearly asks for what the tool does. ' +
  'indirect: the user describes a goal that needs the tool without naming it. negative: plausible requests the tool must NOT handle ' +
  '(general knowledge or another tool\'s job). Each prompt at least 10 characters. Answer with JSON only: {"direct": [...], "indirect": [...], "negative": [...]}.';

const PromptSetSchema = z.looseObject({
  direct: z.array(z.string()).default([]),
  indirect: z.array(z.string()).default([]),
  negative: z.array(z.string()).default([]),
});

/** Ask the backend for `count` rewrites of a tool's description (unvalidated texts). */
export async function generateCandidateTexts(
  backend: ModelBackend,
  subject: GenerationSubject,
  count: number,
  options?: BackendRequestOptions,
): Promise<string[]> {
  const answer = await backend.complete(CANDIDATE_SYSTEM, `${describeSubject(subject)}\nWrite ${count} different rewrites.`, options);
  const parsed = z.array(z.string()).safeParse(extractJson(answer));
  if (!parsed.success) throw replyInvalid('the model did not answer with a JSON array of description strings');
  return parsed.data
    .map((text) => text.trim())
    .filter(Boolean)
    .slice(0, count);
}

/** Ask the backend for golden prompts per category (unvalidated texts, trimmed to the counts asked). */
export async function generatePromptTexts(
  backend: ModelBackend,
  subject: GenerationSubject,
  counts: Record<PromptCategory, number>,
  options?: BackendRequestOptions,
): Promise<Array<{ category: PromptCategory; prompt: string }>> {
  const ask = `${describeSubject(subject)}\nWrite ${counts.direct} direct, ${counts.indirect} indirect and ${counts.negative} negative prompts.`;
  const parsed = PromptSetSchema.safeParse(extractJson(await backend.complete(PROMPTS_SYSTEM, ask, options)));
  if (!parsed.success)
    throw replyInvalid('the model did not answer with {"direct": [...], "indirect": [...], "negative": [...]} of strings');
  return (['direct', 'indirect', 'negative'] as const).flatMap((category) =>
    parsed.data[category].slice(0, counts[category]).map((prompt) => ({ category, prompt: prompt.trim() })),
  );
}

function describeSubject(subject: GenerationSubject): string {
  const lines = [
    `Server: ${subject.server}`,
    `Tool: ${subject.tool}`,
    `Current description: ${subject.canonical.description || '(none)'}`,
    `Input schema: ${JSON.stringify(subject.canonical.inputSchema)}`,
  ];
  if (subject.siblings.length)
    lines.push('Other tools of this server:', ...subject.siblings.map((s) => `- ${s.name}: ${s.description.slice(0, 160)}`));
  return lines.join('\n');
}
