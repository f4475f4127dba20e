// Example user requests per tool (doc2query), written by `loadout enrich` with a model
// backend and searched as a field: a model's guesses at how people ask for the tool bridge the
// gap between their words and the tool's. Kept in the data dir by tool hash, so a changed tool is
// enriched again and an interrupted run resumes where it stopped.
import * as z from 'zod';
import { readTextIfExists, updateTextFile } from '../config/index.js';

const ExampleRequestsFileSchema = z.object({ version: z.literal(1), tools: z.record(z.string(), z.array(z.string())) });

/** The example-requests file of one data dir. */
export class ExampleRequestsStore {
  readonly #file: string;

  constructor(file: string) {
    this.#file = file;
  }

  /** Requests by tool hash (an unreadable file counts as empty: enrich rewrites it). */
  async read(): Promise<Map<string, string[]>> {
    return new Map(Object.entries(parse(await readTextIfExists(this.#file)).tools));
  }

  /** Store one tool's requests (merged under the file lock, so runs in parallel keep each other's). */
  async save(hash: string, requests: readonly string[]): Promise<void> {
    await updateTextFile(this.#file, (text) => {
      const file = parse(text);
      file.tools[hash] = [...requests];
      return `${JSON.stringify(file)}\n`;
    });
  }
}

function parse(text: string | undefined): z.infer<typeof ExampleRequestsFileSchema> {
  try {
    return text ? ExampleRequestsFileSchema.parse(JSON.parse(text)) : { version: 1, tools: {} };
  } catch {
    return { version: 1, tools: {} };
  }
}
