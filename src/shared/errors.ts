// The one error type loadout throws on purpose. Its `code` lets the gateway decide how to
// answer (an isError result the agent can act on, or a protocol error); its message names the
// thing and the fix. A failure kept or passed on past its throw (a discovery's outcome, discovery.json)
// is a Failure: the code to decide by, the message to show, never one told from the other.
import * as z from 'zod';

/** Machine-readable reasons a loadout operation can fail. */
const LoadoutErrorCodeSchema = z.enum([
  'CONFIG_INVALID',
  'CONFIG_NOT_FOUND',
  'CONFIG_EXISTS',
  'CONFIG_CHANGED',
  'NOT_CONFIRMED',
  'STATE_INVALID',
  'DATA_DIR_IN_USE',
  'TOOLSET_NOT_FOUND',
  'TOOLSET_INVALID',
  'TOOLSET_NOT_OWNED',
  'TOOL_NOT_FOUND',
  'TOOL_DISABLED',
  /** A View's call by a name more than one open App's server has (gateway/openApps.ts). */
  'TOOL_AMBIGUOUS',
  /** A View's call of a tool whose visibility leaves Views out. */
  'TOOL_NOT_FOR_APPS',
  'SERVER_NOT_FOUND',
  'SERVER_DISABLED',
  'SERVER_START_FAILED',
  'LIST_FAILED',
  'NEEDS_AUTHORIZATION',
  'SESSION_LOST',
  'ERA_STALE',
  'AUTH_FAILED',
  'CALL_FAILED',
  'INVALID_ARGUMENT',
  'CANDIDATE_REJECTED',
  'PROMOTION_REFUSED',
  'BACKEND_NOT_CONFIGURED',
  'BACKEND_UNAVAILABLE',
  'BACKEND_REPLY_INVALID',
  'SEARCH_VECTORS_INVALID',
  'STORE_UNAVAILABLE',
  'STORE_SCHEMA_NEWER',
  'STORE_ROW_NEWER',
  'STORE_CONFLICT',
  'STORE_SECRET_KEY',
  'CLOSED',
  /** Refused, not run: the gateway is draining (shutting down after the requests under way). */
  'DRAINING',
  /** Cut off: a request still under way when a drain's --drain-seconds passed. */
  'DRAIN_LIMIT',
]);
export type LoadoutErrorCode = z.infer<typeof LoadoutErrorCodeSchema>;

/**
 * A next step a lower layer knows is needed but must not word: the CLI and the agent do it with
 * different commands (`loadout toolset create` vs the build-toolset meta-tool), so each caller
 * says it in its own terms (remedyText).
 */
export type LoadoutRemedy = 'create-toolset';

/** An expected failure with a readable message and a stable code. */
export class LoadoutError extends Error {
  override readonly name = 'LoadoutError';
  /** What to do next, worded by whoever shows the message. */
  readonly remedy?: LoadoutRemedy;
  /** Why it failed, without the thing the message names: for a caller that names that thing itself. */
  readonly reason?: string;

  constructor(
    readonly code: LoadoutErrorCode,
    message: string,
    options?: { cause?: unknown; remedy?: LoadoutRemedy; reason?: string },
  ) {
    super(message, options);
    this.remedy = options?.remedy;
    this.reason = options?.reason;
  }
}

/** `error`'s message, followed by its remedy in the caller's words. */
export function remedyText(error: LoadoutError, words: Readonly<Record<LoadoutRemedy, string>>): string {
  return error.remedy ? `${error.message}; ${words[error.remedy]}` : error.message;
}

/** True when `error` is a LoadoutError, optionally of one of the given codes. */
export function isLoadoutError(error: unknown, ...codes: LoadoutErrorCode[]): error is LoadoutError {
  return error instanceof LoadoutError && (codes.length === 0 || codes.includes(error.code));
}

/** The message of any thrown value, for log lines and error results. */
export function errorMessage(error: unknown): string {
  return error instanceof Error ? error.message : String(error);
}

/** A failure as kept and handed on: `code` is what consumers decide by, `text` what they show. */
export const FailureSchema = z.strictObject({ code: LoadoutErrorCodeSchema, text: z.string() });
export type Failure = z.infer<typeof FailureSchema>;

/** The Failure of a thrown value: a LoadoutError's own code, else `otherwise` (what the caller was doing). */
export function failureOf(error: unknown, otherwise: LoadoutErrorCode): Failure {
  return { code: error instanceof LoadoutError ? error.code : otherwise, text: errorMessage(error) };
}
