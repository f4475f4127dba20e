import { describe, expect, it } from 'vitest';
import { namesServer, namingQueryOf } from './serverNaming.js';

// "time", "plane", "memory", "drive", "google", "fetch" as everyday words; "asana" and "datadog" are names only.
const EVERYDAY = new Set(['time', 'plane', 'memory', 'drive', 'google', 'fetch', 'teams', 'search', 'brave']);
const ordinary = (word: string) => EVERYDAY.has(word);
const names = (query: string, key: string, title?: string) =>
  namesServer(namingQueryOf(query), key, [key.split('-'), ...(title ? [title.toLowerCase().split(' ')] : [])], ordinary);

describe('whether a query uses a server name as a name', () => {
  it('takes a name that is no everyday word for the server wherever it stands', () => {
    expect(names('which tasks are due this week in asana', 'asana')).toBe(true);
    expect(names('show datadog monitors that fire', 'datadog')).toBe(true);
  });

  it('does not take an everyday word used in its everyday sense for the server', () => {
    expect(names('What time does flight LH400 land in Frankfurt today?', 'time')).toBe(false);
    expect(names('Where is the plane flying as CA981 right now?', 'plane')).toBe(false);
    expect(names('Take a heap snapshot to see what is eating memory in this tab', 'memory')).toBe(false);
    expect(names('How long is the drive from Shibuya to Haneda?', 'google-drive')).toBe(false);
    expect(names('google the opening hours of the Louvre', 'google-drive')).toBe(false);
    expect(names('Fetch the weather alerts for Miami', 'fetch')).toBe(false);
  });

  it('takes an everyday word for the server after in, on, from, with…, before server or app, or capitalized inside a sentence', () => {
    expect(names('Post a message to the engineering channel in teams', 'teams')).toBe(true);
    expect(names('search the web with brave for gateway benchmarks', 'brave-search', 'Brave Search MCP Server')).toBe(true);
    expect(names('ask the time server for the date in Lima', 'time')).toBe(true);
    expect(names('Log two hours on issue WEB-12 in the tracker called Plane', 'plane')).toBe(true);
    expect(names('Create a Plane issue for the broken button', 'plane')).toBe(true);
    // Capitals say nothing in a query written in title case.
    expect(names('Where Is The Plane Flying Now', 'plane')).toBe(false);
  });

  it('takes the whole of a name of several words, a server.tool form, and a telegraphic start for the server', () => {
    expect(names('search google drive for the q3 budget', 'google-drive')).toBe(true);
    expect(names('call time.convert_time for 9am in Berlin', 'time')).toBe(true);
    expect(names('save memory of user preference for future conversations', 'memory')).toBe(true);
    expect(names('memory: what do you know about Priya', 'memory')).toBe(true);
    // A part of a longer name at the start is not the name: "drive" alone is not google-drive.
    expect(names('drive times between the offices', 'google-drive')).toBe(false);
  });
});
