// A stdio MCP server wrapped so its traffic can be read afterwards: runs the command after `--`,
// passes stdin and stdout through unchanged, and appends one JSON line per JSON-RPC message to
// LOG: its direction ('client' from the client, 'server' from the server), when (ms), method, id, the
// protocol version it names (a modern request's _meta, or initialize's params), a notification's
// subscription id, an error's code, a call's arguments and a listing's tool names. For run.mjs, which
// reads the era Claude Code speaks from it, and for ../clients-check/run.mjs.
//   node stdioTee.mjs LOG -- COMMAND [ARGS...]
import { spawn } from 'node:child_process';
import { appendFileSync } from 'node:fs';

const [log, separator, command, ...args] = process.argv.slice(2);
if (!log || separator !== '--' || !command) {
  console.error('usage: node stdioTee.mjs LOG -- COMMAND [ARGS...]');
  process.exit(2);
}

const child = spawn(command, args, { stdio: ['pipe', 'pipe', 'inherit'] });
process.stdin.pipe(child.stdin);
child.stdout.pipe(process.stdout);
record(process.stdin, 'client');
record(child.stdout, 'server');
// A client that ends a stdio server by closing its stdin gets the same from the wrapper: the pipe
// above ends the child's stdin. Signals are passed on, and the child's exit is the wrapper's.
for (const signal of ['SIGINT', 'SIGTERM']) process.on(signal, () => child.kill(signal));
child.on('exit', (code, signal) => process.exit(code ?? (signal ? 1 : 0)));

// Each newline-delimited message of `stream`, summarised into the log (the stream itself flows on).
function record(stream, from) {
  let pending = '';
  stream.on('data', (chunk) => {
    pending += chunk.toString('utf8');
    const lines = pending.split('\n');
    pending = lines.pop() ?? '';
    for (const line of lines) if (line.trim()) appendFileSync(log, `${JSON.stringify(summary(line, from))}\n`);
  });
}

function summary(line, from) {
  let message;
  try {
    message = JSON.parse(line);
  } catch {
    return { from, unparsed: line.slice(0, 200) };
  }
  const meta = message.params?._meta ?? {};
  return {
    from,
    at: Date.now(),
    ...(message.method !== undefined && { method: message.method }),
    ...(message.id !== undefined && { id: message.id }),
    ...(message.method === 'tools/call' && { tool: message.params?.name }),
    ...(message.method === 'subscriptions/listen' && { params: { ...message.params, _meta: undefined } }),
    ...(message.method === 'initialize' && { version: message.params?.protocolVersion, client: message.params?.clientInfo }),
    ...(message.method === 'tools/call' && { arguments: message.params?.arguments }),
    ...(Array.isArray(message.result?.tools) && { tools: message.result.tools.map((tool) => tool.name) }),
    ...(meta['io.modelcontextprotocol/protocolVersion'] !== undefined && { version: meta['io.modelcontextprotocol/protocolVersion'] }),
    ...(meta['io.modelcontextprotocol/subscriptionId'] !== undefined && { subscription: meta['io.modelcontextprotocol/subscriptionId'] }),
    ...(message.result?.protocolVersion !== undefined && { version: message.result.protocolVersion }),
    ...(message.result?.supportedVersions !== undefined && { supportedVersions: message.result.supportedVersions }),
    ...(message.error !== undefined && { error: message.error.code, message: message.error.message }),
  };
}
