// Optional model-backed ranking (`search.embeddings` in servers.yaml): each tool's text is embedded
// once by the user's embeddings endpoint (ollama `/api/embed` or OpenAI-style `/v1/embeddings`),
// cached in the data dir by tool hash and model, and each query is embedded per search and scored
// by cosine. Any failure or timeout leaves search offline, said once in the log.
import { expandEnvRecord, readTextIfExists, updateTextFile, type EmbeddingsSettings } from '../config/index.js';
import { errorMessage, type Logger } from '../shared/index.js';
import type { CatalogTool } from './catalogTool.js';
import { toolHash } from './toolHash.js';

/** Tool texts sent per request. */
const BATCH = 64;

type Vector = Float32Array;

/** Cosine scores by tool id from the configured embeddings model. */
export class EmbeddingRanking {
  readonly #settings: EmbeddingsSettings;
  readonly #cacheFile: string;
  readonly #logger: Logger;
  /** `model\0hash` → unit vector; the cache file's content plus what this process embedded. */
  #cache: Map<string, Vector> | undefined;
  #failureLogged = false;

  constructor(settings: EmbeddingsSettings, cacheFile: string, logger: Logger) {
    this.#settings = settings;
    this.#cacheFile = cacheFile;
    this.#logger = logger;
  }

  /** Cosine of the query to each tool, or undefined when the endpoint failed (search stays offline). */
  async scores(query: string, tools: readonly CatalogTool[]): Promise<Map<string, number> | undefined> {
    try {
      const documents = await this.#documentVectors(tools);
      const [queryVector] = await this.#embed([`${this.#settings.query_prefix}${query}`]);
      const scores = new Map<string, number>();
      tools.forEach((tool, index) => {
        const document = documents[index]!;
        if (document.length === queryVector!.length) scores.set(tool.id, dot(queryVector!, document));
      });
      this.#failureLogged = false;
      return scores;
    } catch (error) {
      if (!this.#failureLogged) {
        this.#failureLogged = true;
        this.#logger.warn(
          { mod: 'search', url: this.#settings.url, err: errorMessage(error) },
          'embeddings endpoint unavailable; ranking offline',
        );
      }
      return undefined;
    }
  }

  /** Each tool's vector: from the cache, else embedded now (in batches) and added to it. */
  async #documentVectors(tools: readonly CatalogTool[]): Promise<Vector[]> {
    const cache = (this.#cache ??= await this.#readCache());
    const keys = tools.map((tool) => `${this.#settings.model}\0${toolHash(tool.definition)}`);
    const missing = [...new Set(keys.map((key, index) => (cache.has(key) ? -1 : index)).filter((index) => index >= 0))];
    if (missing.length) {
      const fresh = new Map<string, Vector>();
      for (let start = 0; start < missing.length; start += BATCH) {
        const batch = missing.slice(start, start + BATCH);
        const vectors = await this.#embed(batch.map((index) => `${this.#settings.document_prefix}${documentText(tools[index]!)}`));
        batch.forEach((index, position) => fresh.set(keys[index]!, vectors[position]!));
      }
      for (const [key, vector] of fresh) cache.set(key, vector);
      await this.#writeCache(fresh);
    }
    return keys.map((key) => cache.get(key)!);
  }

  async #embed(texts: string[]): Promise<Vector[]> {
    const { url, api, model, headers, timeout_ms: timeoutMs } = this.#settings;
    const endpoint = new URL(api === 'ollama' ? 'api/embed' : 'v1/embeddings', url.endsWith('/') ? url : `${url}/`);
    const response = await fetch(endpoint, {
      method: 'POST',
      headers: {
        'content-type': 'application/json',
        ...(headers ? expandEnvRecord(headers, process.env, 'search.embeddings.headers') : {}),
      },
      body: JSON.stringify({ model, input: texts }),
      signal: AbortSignal.timeout(timeoutMs),
    });
    if (!response.ok) throw new Error(`${endpoint.href} answered HTTP ${response.status}`);
    const body = (await response.json()) as { embeddings?: unknown; data?: Array<{ embedding?: unknown; index?: number }> };
    const raw =
      api === 'ollama' ? body.embeddings : body.data?.sort((a, b) => (a.index ?? 0) - (b.index ?? 0)).map((item) => item.embedding);
    if (
      !Array.isArray(raw) ||
      raw.length !== texts.length ||
      !raw.every((vector) => Array.isArray(vector) && vector.length > 0 && vector.every((value) => typeof value === 'number'))
    ) {
      throw new Error(`${endpoint.href} answered without ${texts.length} embedding(s)`);
    }
    return (raw as number[][]).map(unit);
  }

  async #readCache(): Promise<Map<string, Vector>> {
    const cache = new Map<string, Vector>();
    try {
      const entries = JSON.parse((await readTextIfExists(this.#cacheFile)) ?? '{}') as Record<string, string>;
      for (const [key, encoded] of Object.entries(entries)) cache.set(key, decode(encoded));
    } catch (error) {
      this.#logger.warn({ mod: 'search', err: errorMessage(error) }, 'embeddings cache unreadable; re-embedding tools');
    }
    return cache;
  }

  // Merged into the file under its lock, so two gateways embedding at once keep both their work.
  async #writeCache(fresh: ReadonlyMap<string, Vector>): Promise<void> {
    await updateTextFile(this.#cacheFile, (text) => {
      let entries: Record<string, string> = {};
      try {
        entries = JSON.parse(text ?? '{}') as Record<string, string>;
      } catch {
        entries = {};
      }
      for (const [key, vector] of fresh) entries[key] = encode(vector);
      return JSON.stringify(entries);
    });
  }
}

function documentText(tool: CatalogTool): string {
  const { title } = tool.definition;
  return `${tool.server} ${tool.name}${title ? ` (${title})` : ''}: ${tool.description}`;
}

function unit(values: number[]): Vector {
  const vector = Float32Array.from(values);
  const norm = Math.hypot(...vector) || 1;
  for (let i = 0; i < vector.length; i++) vector[i]! /= norm;
  return vector;
}

function dot(a: Vector, b: Vector): number {
  let sum = 0;
  for (let i = 0; i < a.length; i++) sum += a[i]! * b[i]!;
  return sum;
}

function encode(vector: Vector): string {
  return Buffer.from(vector.buffer, vector.byteOffset, vector.byteLength).toString('base64');
}

function decode(encoded: string): Vector {
  const bytes = Buffer.from(encoded, 'base64');
  return new Float32Array(bytes.buffer.slice(bytes.byteOffset, bytes.byteOffset + bytes.byteLength));
}
