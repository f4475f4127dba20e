// Query intent: questions, which tools only read, and the kinds of values pasted into a query.
import { describe, expect, it } from 'vitest';
import { catalogTool } from '../../test/helpers/catalogTools.js';
import { CatalogSearch } from './search.js';
import { DEFAULT_FUSION } from './searchTypes.js';
import { isQuestion, readsOnly, withValueKinds } from './searchIntent.js';

describe('query intent', () => {
  it('tells a question from a request to do something', () => {
    expect(isQuestion('Which Datadog alerts are firing at the moment?')).toBe(true);
    expect(isQuestion('how many orders are open')).toBe(true);
    expect(isQuestion('Show me the last 20 lines of server.log')).toBe(true);
    expect(isQuestion('Mute the pager for db-7 tonight')).toBe(false);
    expect(isQuestion('Whichever is free, book it')).toBe(false);
  });

  it("takes a tool's readOnlyHint first, else the verb its name starts with", () => {
    expect(readsOnly(catalogTool('chart', 'generate_line_chart', 'Line chart.', { annotations: { readOnlyHint: true } }))).toBe(true);
    expect(readsOnly(catalogTool('devtools', 'list_pages', 'Pages.', { annotations: { readOnlyHint: false } }))).toBe(false);
    expect(readsOnly(catalogTool('asana', 'asana_get_task', 'A task.'))).toBe(true);
    expect(readsOnly(catalogTool('asana', 'asana_delete_task', 'Delete a task.'))).toBe(false);
    expect(readsOnly(catalogTool('linear-full', 'linear_archiveTeam', 'Archive a team.'))).toBe(false);
    expect(readsOnly(catalogTool('datadog', 'mute_host', 'Mute a host.'))).toBe(false);
    expect(readsOnly(catalogTool('datadog', 'get_monitors', 'Monitors.'))).toBe(true);
  });

  it('ranks a tool that only reads above one that changes things for a question, and not for a request', () => {
    const tools = [
      catalogTool('alerts', 'mute_monitor', 'Silence an alert monitor.'),
      catalogTool('alerts', 'get_monitor_status', 'Alert monitor status.'),
    ];
    const search = new CatalogSearch(tools, { vectorFile: false });
    const first = (query: string) => search.search({ query, limit: 1, offset: 0 }).tools[0]!.id;
    expect(first('Which alert monitor?')).toBe('alerts.get_monitor_status');
    expect(first('alert monitor')).toBe('alerts.mute_monitor');
    const plain = new CatalogSearch(tools, { vectorFile: false, fusion: { ...DEFAULT_FUSION, questionReadBoost: 0 } });
    expect(plain.search({ query: 'Which alert monitor?', limit: 1, offset: 0 }).tools[0]!.id).toBe('alerts.mute_monitor');
  });

  it('names each pasted value by its kind, and leaves plain words and dotted code alone', () => {
    const kinds = (query: string) =>
      withValueKinds(query)
        .trim()
        .replace(/\s+/g, ' ')
        .replace(/ ([,?])/g, '$1');
    expect(kinds('Open file:///home/me/report.html in the browser')).toBe('Open url in the browser');
    expect(kinds('Invite dana@example.com')).toBe('Invite email');
    expect(kinds('Hand ENG-412 over to Dana')).toBe('Hand issue over to Dana');
    expect(kinds('Post it in #ops-room on Discord')).toBe('Post it in channel on Discord');
    expect(kinds('Make a folder reports/2024/q3 and ~/Pictures')).toBe('Make a folder path and path');
    expect(kinds('Show me ~/Pictures/cat.png')).toBe('Show me file');
    expect(kinds('Is my .circleci/config.yml valid? Compare package.json, .eslintrc and server.log')).toBe(
      'Is my file valid? Compare file, .eslintrc and file',
    );
    expect(kinds('Run document.title in the tab and mute db-7')).toBe('Run document.title in the tab and mute db-7');
  });

  it('ranks the tool that takes the kind of value pasted above one that matches its words', () => {
    const tools = [
      catalogTool('files', 'get_file_info', 'Size and modification time of a file at a path.'),
      catalogTool('ci', 'config_helper', 'Check a CI config for mistakes.'),
    ];
    const search = new CatalogSearch(tools, { vectorFile: false });
    expect(search.search({ query: 'How big is config.yaml?', limit: 1, offset: 0 }).tools[0]!.id).toBe('files.get_file_info');
  });
});
