// `node --import ./scripts/conformance/nodeShim.mjs …`: lets @modelcontextprotocol/conformance
// run on Node 20. The suite imports `globSync` from "fs" by name (Node 22+); a named ESM import
// of a builtin cannot be patched after the fact, so a resolve hook sends the suite's "fs" to
// fsWithGlob.mjs instead. Does nothing on a Node that has fs.globSync.
import { register } from 'node:module';
import { isMainThread } from 'node:worker_threads';
import fs from 'node:fs';

const SHIM_URL = new URL('./fsWithGlob.mjs', import.meta.url).href;

/** Module resolve hook (runs in the loader thread). */
export async function resolve(specifier, context, nextResolve) {
  if ((specifier === 'fs' || specifier === 'node:fs') && context.parentURL !== SHIM_URL && context.parentURL?.includes('/node_modules/')) {
    return { url: SHIM_URL, shortCircuit: true };
  }
  return nextResolve(specifier, context);
}

if (isMainThread && typeof fs.globSync !== 'function') register(import.meta.url);
