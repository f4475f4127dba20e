// Demo server "text": three small, deterministic text tools (no I/O, no clock), so the demo's
// output is the same on every machine. Written with the low-level SDK Server, like any MCP server.
import { StdioServerTransport } from '@modelcontextprotocol/server/stdio';
import { Server } from '@modelcontextprotocol/server';
import type { CallToolResult, Tool } from '@modelcontextprotocol/server';

const TEXT_INPUT: Tool['inputSchema'] = {
  type: 'object',
  properties: { text: { type: 'string', description: 'The text to work on' } },
  required: ['text'],
};

const tools: Tool[] = [
  {
    name: 'count_words',
    title: 'Count words',
    description: 'Count the words, lines and characters of a text.',
    inputSchema: TEXT_INPUT,
    outputSchema: {
      type: 'object',
      properties: { words: { type: 'integer' }, lines: { type: 'integer' }, characters: { type: 'integer' } },
      required: ['words', 'lines', 'characters'],
    },
    annotations: { readOnlyHint: true, idempotentHint: true },
  },
  {
    name: 'slugify',
    title: 'Slugify',
    description: 'Turn a title into a URL slug (lower case, words joined by "-").',
    inputSchema: TEXT_INPUT,
    annotations: { readOnlyHint: true, idempotentHint: true },
  },
  {
    name: 'title_case',
    title: 'Title case',
    description: 'Capitalise the first letter of every word.',
    inputSchema: TEXT_INPUT,
    annotations: { readOnlyHint: true, idempotentHint: true },
  },
];

function run(name: string, text: string): CallToolResult {
  switch (name) {
    case 'count_words': {
      const counts = {
        words: text.split(/\s+/).filter(Boolean).length,
        lines: text.split('\n').filter(Boolean).length,
        characters: text.length,
      };
      return {
        content: [{ type: 'text', text: `${counts.words} words, ${counts.lines} lines, ${counts.characters} characters` }],
        structuredContent: counts,
      };
    }
    case 'slugify':
      return {
        content: [
          {
            type: 'text',
            text: text
              .toLowerCase()
              .replace(/[^a-z0-9]+/g, '-')
              .replace(/^-|-$/g, ''),
          },
        ],
      };
    case 'title_case':
      return { content: [{ type: 'text', text: text.replace(/\b\p{L}/gu, (letter) => letter.toUpperCase()) }] };
    default:
      return {
        content: [{ type: 'text', text: `Unknown tool '${name}'; this server has ${tools.map((t) => t.name).join(', ')}.` }],
        isError: true,
      };
  }
}

const server = new Server({ name: 'loadout-demo-text', version: '1.0.0' }, { capabilities: { tools: {} } });
server.setRequestHandler('tools/list', () => ({ tools }));
server.setRequestHandler('tools/call', (request) => {
  const text = request.params.arguments?.text;
  if (typeof text !== 'string') return { content: [{ type: 'text', text: 'Argument "text" (a string) is required.' }], isError: true };
  return run(request.params.name, text);
});
await server.connect(new StdioServerTransport());
