// The worker thread one run-code script runs in: a QuickJS interpreter (WebAssembly, no I/O of its
// own) in a fresh WebAssembly module, so nothing outlives the run, and on a thread of its own, so an
// endless loop stalls only this thread while the gateway answers everyone else and ends it on time.
// The script reaches the world only through callTool, search and console.log, each a message to
// the gateway (codeRunner.ts) carrying JSON text: no host object ever enters the interpreter.
import { parentPort, workerData } from 'node:worker_threads';
import { newQuickJSWASMModuleFromVariant, shouldInterruptAfterDeadline, type QuickJSContext } from 'quickjs-emscripten-core';
import type { FromWorker, ToWorker, WorkerStart } from './codeMessages.js';

// The interpreter's own stack: deep enough for ordinary recursion, and a runaway one is a
// RangeError in the script rather than a crash of the WebAssembly module.
const MAX_STACK_BYTES = 1024 * 1024;

// What the script sees: callTool, search and console, over the three host functions, which are
// then taken off the global object. JSON.stringify on the way out and JSON.parse on the way in
// are the boundary: only data crosses it.
const PRELUDE = `(() => {
  const host = globalThis.__loadoutHost;
  delete globalThis.__loadoutHost;
  const ask = (kind, name, value) => host.ask(kind, name, JSON.stringify(value === undefined ? {} : value)).then((text) => JSON.parse(text));
  const line = (values) => values.map((value) => (typeof value === 'string' ? value : JSON.stringify(value) ?? String(value))).join(' ');
  globalThis.callTool = (name, args) => ask('tool', String(name), args);
  globalThis.search = (query, options) => ask('search', String(query), options);
  const log = (...values) => host.log(line(values));
  globalThis.console = Object.freeze({ log, info: log, warn: log, error: log, debug: log });
})();`;

const port = parentPort!;
const start = workerData as WorkerStart;
const post = (message: FromWorker): void => port.postMessage(message);

// The release build without asyncify: the script's awaits on the gateway are promises the worker
// settles, which needs no suspended WebAssembly stack (see docs/code-mode.md).
const module = await newQuickJSWASMModuleFromVariant(import('@jitl/quickjs-wasmfile-release-sync'));
const runtime = module.newRuntime({
  memoryLimitBytes: start.memoryBytes,
  maxStackSizeBytes: MAX_STACK_BYTES,
  // The gateway also ends the thread at the deadline; this stops the interpreter itself first,
  // so a loop ends as an error of the script.
  interruptHandler: shouldInterruptAfterDeadline(start.deadline),
});
const context = runtime.newContext();
const pending = new Map<number, { resolve(text: string): void; reject(message: string): void }>();
let nextId = 0;

installHost(context);
const prelude = context.evalCode(PRELUDE, 'prelude.js');
context.unwrapResult(prelude).dispose();

// The script is the body of an async function, so it may `await` and `return`; its value leaves as JSON text.
// Kept on the first line, so the script's line numbers are its own.
const evaluated = context.evalCode(
  `(async () => {${start.code}\n})().then((value) => JSON.stringify(value === undefined ? null : value))`,
  'script.js',
);
if (evaluated.error) {
  finish({ type: 'failed', error: describe(context, evaluated.error) });
} else {
  const answer = evaluated.value;
  void context.resolvePromise(answer).then((settled) => {
    answer.dispose();
    // Each handle disposed once (describe disposes the error's): a second dispose throws, and would end the thread.
    if (settled.error) finish({ type: 'failed', error: describe(context, settled.error) });
    else {
      finish({ type: 'returned', json: context.getString(settled.value) ?? 'null' });
      settled.value.dispose();
    }
  });
  runJobs();
}

port.on('message', (message: ToWorker) => {
  const call = pending.get(message.id);
  if (!call) return;
  pending.delete(message.id);
  if (message.ok) call.resolve(message.json);
  else call.reject(message.error);
  runJobs();
});

function installHost(context: QuickJSContext): void {
  const host = context.newObject();
  const ask = context.newFunction('ask', (kindHandle, nameHandle, jsonHandle) => {
    const kind = context.getString(kindHandle) === 'search' ? 'search' : 'tool';
    const id = nextId++;
    const deferred = context.newPromise();
    pending.set(id, {
      resolve(text) {
        const value = context.newString(text);
        deferred.resolve(value);
        value.dispose();
        deferred.dispose();
      },
      reject(message) {
        const error = context.newError(message);
        deferred.reject(error);
        error.dispose();
        deferred.dispose();
      },
    });
    post({ type: 'ask', id, kind, name: context.getString(nameHandle), json: context.getString(jsonHandle) });
    return deferred.handle;
  });
  const log = context.newFunction('log', (textHandle) => {
    post({ type: 'log', line: context.getString(textHandle) });
  });
  context.setProp(host, 'ask', ask);
  context.setProp(host, 'log', log);
  context.setProp(context.global, '__loadoutHost', host);
  for (const handle of [ask, log, host]) handle.dispose();
}

// Runs what the script can run now (up to its next await on the gateway); an error here is one no
// promise could catch (the time limit, memory): the run ends with it.
function runJobs(): void {
  const ran = runtime.executePendingJobs();
  if (ran.error) finish({ type: 'failed', error: describe(context, ran.error) });
}

function describe(context: QuickJSContext, handle: { dispose(): void }): { name: string; message: string } {
  const dumped: unknown = context.dump(handle as Parameters<QuickJSContext['dump']>[0]);
  handle.dispose();
  if (dumped && typeof dumped === 'object') {
    const { name, message } = dumped as { name?: unknown; message?: unknown };
    return { name: typeof name === 'string' ? name : 'Error', message: typeof message === 'string' ? message : JSON.stringify(dumped) };
  }
  return { name: 'Error', message: `the script threw ${JSON.stringify(dumped) ?? String(dumped)}` };
}

// The first outcome is the run's; the thread is ended by the gateway once it has read it (the
// interpreter is not disposed: its module goes with the thread).
let finished = false;
function finish(message: FromWorker): void {
  if (finished) return;
  finished = true;
  post(message);
}
