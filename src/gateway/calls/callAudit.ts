// What the call router records and refuses on a principal's behalf: the audit event of each call
// it answers (written after the answer, batched: audit layer), and the JSON-RPC error of a call
// over a rate limit (identity's CallLimits), which says when to retry.
import { ProtocolError } from '@modelcontextprotocol/server';
import type { AuditAction, AuditOutcome } from '../../audit/index.js';
import type { LimitRefusal } from '../../identity/index.js';
import type { GatewayContext } from '../context.js';

/** The JSON-RPC code of a call over a rate limit (implementation-defined server range; HTTP's 429). */
export const RATE_LIMITED_CODE = -32029;

// Meta-tools recorded as what they do to a principal's tools; the rest are `meta-tool`.
const META_TOOL_ACTIONS: Readonly<Record<string, AuditAction>> = {
  'equip-toolset': 'equip',
  'unequip-toolset': 'equip',
  'build-toolset': 'toolset-change',
  'delete-toolset': 'toolset-change',
};

/** The audit action of a call of meta-tool `name`. */
export function metaToolAction(name: string): AuditAction {
  return META_TOOL_ACTIONS[name] ?? 'meta-tool';
}

/** One tools/call as the router saw it, for its audit record. */
interface AuditedCall {
  readonly action: AuditAction;
  readonly server?: string;
  /** The tool's own name (the server's, or a meta-tool's); absent for a name that is no tool. */
  readonly tool?: string;
  /** The name the call called it by (the exposed, flattened name; a `server.tool` id; a meta-tool's name). */
  readonly exposedTool: string;
  /** `app` for a View's call by its server's own tool name. */
  readonly via?: 'app';
  readonly arguments: unknown;
  readonly requestId: string | number;
}

/** Records a call with how it ended. */
export type RecordCall = (outcome: AuditOutcome, detail?: string) => void;

/** Start timing `call`; the returned function records it with how it ended (undefined: no audit trail, nothing to do). */
export function auditCall(context: GatewayContext, call: AuditedCall): RecordCall | undefined {
  const { audit } = context;
  if (!audit.enabled) return undefined;
  const startedAt = Date.now();
  const started = performance.now();
  return (outcome, detail) =>
    audit.record({
      startedAt,
      principal: context.principal,
      method: 'tools/call',
      hasArguments: true,
      ...call,
      outcome,
      durationMs: performance.now() - started,
      ...(detail === undefined ? {} : { detail }),
    });
}

/**
 * Record how `answer` ends (a result, an isError result, or a thrown error), and hand it on
 * unchanged; without a recorder (no audit trail) the call path gains nothing. A thrown error is
 * recorded by its code only: a server's message may quote the arguments it was sent.
 */
export function auditedAnswer<T extends Record<string, unknown>>(answer: Promise<T>, record: RecordCall | undefined): Promise<T> {
  if (!record) return answer;
  answer.then(
    (result) => record(result.isError === true ? 'error' : 'ok'),
    (error: unknown) => record('failed', failureCode(error)),
  );
  return answer;
}

// An error's code (a JSON-RPC code, or loadout's own), else its kind: never its words.
function failureCode(error: unknown): string {
  const code = (error as { code?: unknown } | null)?.code;
  if (typeof code === 'number' || typeof code === 'string') return `code ${code}`;
  return error instanceof Error ? error.name : 'error';
}

/** The error a call over `refusal` gets: which limit, and when to retry (`data.retryAfterSeconds`). */
export function rateLimitError(refusal: LimitRefusal): ProtocolError {
  const retryAfterSeconds = Math.max(1, Math.ceil(refusal.retryAfterMs / 1000));
  const scope = refusal.server === undefined ? 'calls' : `calls of server '${refusal.server}'`;
  return new ProtocolError(
    RATE_LIMITED_CODE,
    `Rate limit reached: at most ${refusal.callsPerMinute} ${scope} a minute for each caller; retry in ${retryAfterSeconds} s.`,
    {
      retryAfterSeconds,
      limit: refusal.limit,
      callsPerMinute: refusal.callsPerMinute,
      ...(refusal.server === undefined ? {} : { server: refusal.server }),
    },
  );
}

/** Whether `error` is a rate-limit refusal (rateLimitError), which a meta-tool passes on as the JSON-RPC error it is. */
export function isRateLimitError(error: unknown): boolean {
  return ProtocolError.isInstance(error) && error.code === RATE_LIMITED_CODE;
}
