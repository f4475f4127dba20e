// run-code's wing: the runner that starts a script's worker thread and answers its calls (the
// worker itself, codeWorker.ts, is its own bundle entry and is never imported). Its door, loaded
// with `await import()` on the first run-code call only.
export { runScript, type CodeOutcome } from './codeRunner.js';
