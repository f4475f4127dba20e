// What the gateway (codeRunner.ts) and a script's worker thread (codeWorker.ts) say to each other:
// the run it starts with, the script's calls and console lines, and how it ended. Every value the
// script sends or receives is JSON text. Plain types, no zod: both ends are loadout's own, and the
// worker starts on every run (zod's chunk cost it ~50 ms).

/** The worker's workerData: the script and its limits. */
export interface WorkerStart {
  readonly code: string;
  readonly memoryBytes: number;
  /** Date.now() past which the interpreter stops. */
  readonly deadline: number;
}

/** An error the script ended with, as the interpreter named it (InternalError "interrupted" is the time limit). */
export interface ScriptError {
  readonly name: string;
  readonly message: string;
}

/** A message from the worker. */
export type FromWorker =
  | { readonly type: 'ask'; readonly id: number; readonly kind: 'tool' | 'search'; readonly name: string; readonly json: string }
  | { readonly type: 'log'; readonly line: string }
  | { readonly type: 'returned'; readonly json: string }
  | { readonly type: 'failed'; readonly error: ScriptError };

/** The gateway's answer to an `ask`: the call's result as JSON text, or why it could not be made. */
export type ToWorker =
  { readonly id: number; readonly ok: true; readonly json: string } | { readonly id: number; readonly ok: false; readonly error: string };
