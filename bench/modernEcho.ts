// The bench's echo server for the 2026-07-28 era: an `echo` tool like the echo fixture's, plus `era`, which
// answers with the protocol version the request came in (the modern `_meta` envelope's, or
// "2025" when there is none), so a row can say which era loadout actually spoke downstream.
// Served with the SDK's serveStdio, which answers both eras; `reject` as its argument refuses
// 2025-era openings, as a modern-only server does.
import { PROTOCOL_VERSION_META_KEY, Server, type CallToolResult, type Tool } from '@modelcontextprotocol/server';
import { serveStdio } from '@modelcontextprotocol/server/stdio';

const tools: Tool[] = [
  {
    name: 'echo',
    description: 'Return the given text unchanged.',
    inputSchema: { type: 'object', properties: { text: { type: 'string' } }, required: ['text'] },
  },
  {
    name: 'era',
    description: 'Return the protocol version this request came in.',
    inputSchema: { type: 'object', properties: {} },
  },
];

function buildServer(): Server {
  const server = new Server({ name: 'modern-echo', version: '1.0.0' }, { capabilities: { tools: {} } });
  server.setRequestHandler('tools/list', () => ({ tools }));
  server.setRequestHandler('tools/call', (request, ctx): CallToolResult => {
    if (request.params.name === 'era') {
      const envelope: Record<string, unknown> = ctx.mcpReq.envelope ?? {};
      const version = envelope[PROTOCOL_VERSION_META_KEY];
      return { content: [{ type: 'text', text: typeof version === 'string' ? version : '2025' }] };
    }
    return { content: [{ type: 'text', text: String(request.params.arguments?.text) }] };
  });
  return server;
}

serveStdio(buildServer, { legacy: process.argv[2] === 'reject' ? 'reject' : 'serve' });
