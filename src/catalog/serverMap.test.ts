import { describe, expect, it } from 'vitest';
import { formatServerMap, MAP_BUDGET_BYTES, summarizeServer, type ServerMapEntry } from './serverMap.js';

const tool = (name: string) => ({ name, inputSchema: { type: 'object' as const } });
const ready = { kind: 'ready' } as const;

describe('the map of the catalog', () => {
  it("says what a server is for in its own words: description, else its instructions' first sentence, else a telling title", () => {
    const tools = [tool('get_issue')];
    expect(summarizeServer('a', { tools, about: { description: 'Issue tracking for small teams. Many more words.' } }).purpose).toBe(
      'Issue tracking for small teams',
    );
    expect(
      summarizeServer('b', {
        tools,
        about: { instructions: 'This server provides access to **Acme CRM** contacts and deals. Call X first.' },
      }).purpose,
    ).toBe('Acme CRM contacts and deals');
    expect(summarizeServer('c', { tools, about: { title: 'Weather forecasts' } }).purpose).toBe('Weather forecasts');
    // A title that only repeats the server's name says nothing: the tools speak instead.
    expect(
      summarizeServer('github', { tools: [tool('get_issue'), tool('list_issues')], about: { title: 'GitHub MCP Server' } }).purpose,
    ).toBe('issue');
  });

  it('derives the purpose from the objects the tool names share, most shared first, without verbs or the server name', () => {
    const tools = [
      'create_entities',
      'delete_entities',
      'add_observations',
      'delete_observations',
      'read_graph',
      'search_nodes',
      'open_nodes',
      'memory_stats',
    ].map(tool);
    expect(summarizeServer('memory', { tools })).toEqual({
      server: 'memory',
      purpose: 'entities, nodes, observations, graph, stats',
      tools: 8,
    });
  });

  it('keeps one line per server with its tool count, and shows a server not discovered or failed by its state', () => {
    const lines = formatServerMap([
      { server: 'memory', summary: { server: 'memory', purpose: 'entities, relations', tools: 9 }, state: ready },
      { server: 'one', summary: { server: 'one', purpose: 'things', tools: 1 }, state: { kind: 'pending' } },
      { server: 'slack', state: { kind: 'pending' } },
      { server: 'broken', state: { kind: 'failed', reason: "Server 'broken' failed to start: spawn ENOENT" } },
    ]);
    expect(lines).toEqual([
      'memory (9 tools): entities, relations',
      'one (1 tool, discovering): things',
      'slack: not discovered yet',
      "broken: not discovered (Server 'broken' failed to start: spawn ENOENT)",
    ]);
  });

  it(`fits 35 servers with long purposes in ${MAP_BUDGET_BYTES} bytes, narrowing the purposes, and cuts a longer map with a count`, () => {
    const entry = (index: number): ServerMapEntry => {
      const server = `server-number-${index}`;
      const purpose = 'projects, issues, cycles, comments, attachments, labels, webhooks, customers';
      return { server, summary: { server, purpose, tools: 40 + index }, state: ready };
    };
    const map = formatServerMap(Array.from({ length: 35 }, (_, index) => entry(index)));
    expect(map).toHaveLength(35);
    expect(Buffer.byteLength(map.join('\n'))).toBeLessThanOrEqual(MAP_BUDGET_BYTES);
    expect(map[0]).toMatch(/^server-number-0 \(40 tools\): projects, issues/);
    expect(map[0]).toMatch(/…$/);

    const huge = formatServerMap(Array.from({ length: 400 }, (_, index) => entry(index)));
    expect(Buffer.byteLength(huge.join('\n'))).toBeLessThanOrEqual(MAP_BUDGET_BYTES);
    expect(huge.at(-1)).toMatch(/^… and \d+ more servers: discover-all-tools \{"server": "NAME"\} lists one\.$/);
  });

  it('names every one of 200 servers within the budget, grouped by what they are for, several on a line', () => {
    // Names of the length real ones have (8.6 characters on average over 108 npm servers).
    const kinds = ['pg', 'github', 'slack', 'browser', 'notes', 'weather'];
    const purposes: Record<string, string> = {
      pg: 'postgres tables, queries, schemas',
      github: 'repositories, pull requests, issues',
      slack: 'channels, messages',
      browser: 'pages, screenshots, clicks',
      notes: 'memory, knowledge graph',
      weather: 'forecasts, alerts',
    };
    const entries = Array.from({ length: 200 }, (_, index): ServerMapEntry => {
      const kind = kinds[index % kinds.length]!;
      const server = `${kind}${index}`;
      return { server, summary: { server, purpose: purposes[kind]!, tools: 10 }, state: ready };
    });
    const map = formatServerMap(entries);
    expect(Buffer.byteLength(map.join('\n'))).toBeLessThanOrEqual(MAP_BUDGET_BYTES);
    for (const { server } of entries) expect(map.join('\n')).toMatch(new RegExp(`\\b${server}\\b`));
    expect(map.find((line) => line.startsWith('databases: '))).toMatch(/^databases: pg0 pg6 pg12\b/);
    expect(map.find((line) => line.startsWith('chat: '))).toMatch(/slack2\b/);
    expect(map.length).toBeLessThan(12);
  });

  it("cuts a label at a whole word, and never takes an instructions' preamble for a summary", () => {
    const server = 'shop';
    const entries = Array.from({ length: 35 }, (_, index): ServerMapEntry => ({
      server: `${server}${index}`,
      summary: { server: `${server}${index}`, purpose: 'content, categories, performance, inventories, shipments, refunds', tools: 3 },
      state: ready,
    }));
    for (const line of formatServerMap(entries))
      expect(line).toMatch(/(content|categories|performance|inventories|shipments|refunds)(…)?$/);
    const everything = summarizeServer('everything', {
      tools: [tool('echo'), tool('get_sum')],
      about: { instructions: 'Everything Server – Server Instructions Audience: These instructions are for the model.' },
    });
    expect(everything.purpose).not.toMatch(/Instructions|Audience/);
  });
});
