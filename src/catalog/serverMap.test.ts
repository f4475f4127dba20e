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
    expect(huge.at(-1)).toMatch(/^… and \d+ more servers not named here: discover-all-tools \{\} names them all\.$/);
    // Names folded together are cut inside the fold: as many as fit are named.
    expect(huge.join('\n')).toMatch(/^tracking: server-\{number-0,number-1,number-2,/m);
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

  it('folds names that share their first part as a shell writes them, keeping a server not discovered apart', () => {
    const entry = (server: string, state: ServerMapEntry['state'] = ready): ServerMapEntry => ({
      server,
      summary: { server, purpose: 'issues, projects', tools: 3 },
      state,
    });
    const copies = Array.from({ length: 11 }, (_, index) => `shortcut-${index + 2}`);
    const servers = ['shortcut', ...copies, 'shortcut-cloud', 'linear', 'linear-full', 'asana'];
    const entries = [...servers.map((server) => entry(server)), entry('shortcut-13', { kind: 'failed', reason: 'spawn ENOENT' })];
    const line = 'tracking: shortcut{,-2,-3,-4,-5,-6,-7,-8,-9,-10,-11,-12,-cloud} linear{,-full} asana shortcut-13 (not discovered)';
    const legend = 'Braces join names: jira{,-2,-cloud} is jira, jira-2 and jira-cloud.';
    // A budget only the folded form fits: by name alone the line is longer than it and its legend.
    expect(formatServerMap(entries, Buffer.byteLength(`${line}\n${legend}`))).toEqual([line, legend]);
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
