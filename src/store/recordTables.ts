// The statements of the store's tables on Postgres: plain records (checked with their kind's
// schema) and OAuth records (sealed with SecretBox), each write one statement whose trigger sets
// the revision, logs and notifies. Rows of a newer row format are refused here, once.
import type { Sql } from 'postgres';
import type * as z from 'zod';
import type { OAuthRecord } from '../config/index.js';
import { LoadoutError, firstIssueText } from '../shared/index.js';
import { OAUTH_KIND, ROW_FORMAT, conflict, validKey } from './records.js';
import type { SecretBox } from './secretBox.js';
import type { OAuthCollection, OAuthRead, PutOptions, ListedRecord, RecordCollection, StoredRecord } from './store.js';

// Concurrent writers of one key retry an update this many times before reporting a conflict.
const UPDATE_ATTEMPTS = 50;

/** Runs a statement, turning a fault into one line that says what was being done. */
export type Run = <T>(operation: StoreOperation, doing: string, work: (sql: Sql) => Promise<T>) => Promise<T>;

/** What one statement does to a table's records (the store's latency is measured per operation). */
export type StoreOperation = 'read' | 'list' | 'save' | 'delete';

interface Row {
  key: string;
  format: number;
  revision: string;
}

// The statements of one table, shared by plain and encrypted records: the row format check and
// the revision-checked write live here once.
abstract class Table<Stored extends Row> {
  constructor(
    protected readonly kind: string,
    protected readonly table: string,
    protected readonly run: Run,
  ) {}

  protected async rows(doing: string, key?: string): Promise<Stored[]> {
    const rows = await this.run(key === undefined ? 'list' : 'read', doing, (sql) =>
      key === undefined
        ? sql<Stored[]>`SELECT * FROM ${sql(this.table)} ORDER BY key`
        : sql<Stored[]>`SELECT * FROM ${sql(this.table)} WHERE key = ${key}`,
    );
    for (const row of rows) {
      if (row.format > ROW_FORMAT) {
        throw new LoadoutError(
          'STORE_ROW_NEWER',
          `${this.kind} '${row.key}' was written by a newer loadout (row format ${row.format}; this one reads up to ${ROW_FORMAT}); upgrade loadout on this machine`,
        );
      }
    }
    return rows;
  }

  /** Write `columns` (name → [value, SQL type]) of `key` at the row format, honouring ifRevision; returns the new revision. */
  protected async write(
    key: string,
    columns: Record<string, [value: string | Buffer, type: string]>,
    options: PutOptions,
  ): Promise<number> {
    validKey(this.kind, key);
    // Column names and types are this file's constants, never input; values go as parameters. The
    // revision (and updated_at) come from a trigger: every write takes a new one.
    const names = ['key', 'format', ...Object.keys(columns)];
    const params: Array<string | number | Buffer> = [key, ROW_FORMAT, ...Object.values(columns).map(([value]) => value)];
    const types = ['text', 'smallint', ...Object.values(columns).map(([, type]) => type)];
    const placeholders = types.map((type, i) => `$${i + 1}::${type}`);
    const sets = names.slice(1).map((name, i) => `${name} = ${placeholders[i + 1]}`);
    let text: string;
    if (options.ifRevision === undefined) {
      text = `INSERT INTO ${this.table} (${names.join(', ')}) VALUES (${placeholders.join(', ')})
        ON CONFLICT (key) DO UPDATE SET ${sets.join(', ')} RETURNING revision`;
    } else if (options.ifRevision === null) {
      text = `INSERT INTO ${this.table} (${names.join(', ')}) VALUES (${placeholders.join(', ')}) ON CONFLICT (key) DO NOTHING RETURNING revision`;
    } else {
      params.push(options.ifRevision);
      text = `UPDATE ${this.table} SET ${sets.join(', ')} WHERE key = $1 AND revision = $${params.length}::bigint RETURNING revision`;
    }
    const rows = await this.run('save', `save ${this.kind} '${key}'`, (sql) => sql.unsafe<Array<{ revision: string }>>(text, params));
    if (!rows[0]) throw conflict(this.kind, key, options.ifRevision);
    return Number(rows[0].revision);
  }

  protected async remove(key: string, ifRevision?: number): Promise<boolean> {
    const rows = await this.run('delete', `delete ${this.kind} '${key}'`, (sql) =>
      ifRevision === undefined
        ? sql`DELETE FROM ${sql(this.table)} WHERE key = ${key} RETURNING key`
        : sql`DELETE FROM ${sql(this.table)} WHERE key = ${key} AND revision = ${ifRevision} RETURNING key`,
    );
    if (ifRevision !== undefined && !rows.length) throw conflict(this.kind, key, ifRevision);
    return rows.length > 0;
  }

  delete(key: string): Promise<boolean> {
    return this.remove(key);
  }
}

interface DocumentRow extends Row {
  doc: unknown;
}

export class DocumentTable<T> extends Table<DocumentRow> implements RecordCollection<T> {
  readonly #asGiven: boolean;

  constructor(
    kind: string,
    { table, asGiven }: { table: string; asGiven: boolean },
    private readonly schema: z.ZodType<T>,
    run: Run,
  ) {
    super(kind, table, run);
    this.#asGiven = asGiven;
  }

  async get(key: string): Promise<StoredRecord<T> | undefined> {
    const [row] = await this.rows(`read ${this.kind} '${key}'`, key);
    return row && this.#parse(row);
  }

  async list(): Promise<Array<StoredRecord<T>>> {
    return (await this.rows(`list ${this.kind}`)).map((row) => this.#parse(row));
  }

  /** A row is checked as it is written: every one reads. */
  async listEach(): Promise<Array<ListedRecord<T>>> {
    return (await this.list()).map((record) => ({ kind: 'ok', record }));
  }

  async put(key: string, value: T, options: PutOptions = {}): Promise<number> {
    const parsed = this.schema.safeParse(value);
    if (!parsed.success) throw new LoadoutError('INVALID_ARGUMENT', `${this.kind} '${key}' not saved: ${firstIssueText(parsed.error)}`);
    // A json column (not jsonb) keeps the text as written: key order survives, as the files keep it.
    return this.write(key, { doc: [JSON.stringify(this.#asGiven ? value : parsed.data), 'text::json'] }, options);
  }

  async putAll(records: ReadonlyArray<{ key: string; value: T }>): Promise<void> {
    for (const { key, value } of records) await this.put(key, value);
  }

  async updateAll(changes: ReadonlyMap<string, (current: T | undefined) => T | undefined>): Promise<void> {
    for (const [key, change] of changes) await this.update(key, change);
  }

  async update(key: string, change: (current: T | undefined) => T | undefined): Promise<StoredRecord<T> | undefined> {
    return retryConflicts(this.kind, key, async () => {
      const current = await this.get(key);
      const next = change(current?.value);
      if (next === undefined) {
        if (current) await this.remove(key, current.revision);
        return undefined;
      }
      const revision = await this.put(key, next, { ifRevision: current?.revision ?? null });
      return { key, value: next, revision };
    });
  }

  #parse(row: DocumentRow): StoredRecord<T> {
    const parsed = this.schema.safeParse(row.doc);
    if (!parsed.success) {
      throw new LoadoutError('STATE_INVALID', `${this.kind} '${row.key}' in the store is not valid: ${firstIssueText(parsed.error)}`);
    }
    return { key: row.key, value: this.#asGiven ? (row.doc as T) : parsed.data, revision: Number(row.revision) };
  }
}

interface SealedRow extends Row {
  key_id: string;
  iv: Buffer;
  auth_tag: Buffer;
  ciphertext: Buffer;
}

export class OAuthTable extends Table<SealedRow> implements OAuthCollection {
  readonly #box: SecretBox | undefined;

  constructor(run: Run, box: SecretBox | undefined) {
    super('oauth tokens', OAUTH_KIND.table, run);
    this.#box = box;
  }

  async get(server: string): Promise<OAuthRead | undefined> {
    const [row] = await this.rows(`read the oauth tokens of '${server}'`, server);
    return row && this.#open(row);
  }

  async list(): Promise<OAuthRead[]> {
    return (await this.rows('list oauth tokens')).map((row) => this.#open(row));
  }

  async put(server: string, record: OAuthRecord, options: PutOptions = {}): Promise<number> {
    if (options.ifRevision !== undefined) return this.#seal(server, record, options.ifRevision);
    const current = await this.get(server);
    this.#refuseUnreadable(current);
    return this.#seal(server, record, current?.revision ?? null);
  }

  async update(server: string, change: (current: OAuthRecord | undefined) => OAuthRecord | undefined): Promise<OAuthRead | undefined> {
    return retryConflicts(this.kind, server, async () => {
      const current = await this.get(server);
      this.#refuseUnreadable(current);
      const value = change(current?.state === 'readable' ? current.value : undefined);
      if (value === undefined) {
        if (current) await this.remove(server, current.revision);
        return undefined;
      }
      const revision = await this.#seal(server, value, current?.revision ?? null);
      return { key: server, state: 'readable', value, revision };
    });
  }

  #seal(server: string, record: OAuthRecord, ifRevision: number | null): Promise<number> {
    const parsed = OAUTH_KIND.schema.safeParse(record);
    if (!parsed.success)
      throw new LoadoutError('INVALID_ARGUMENT', `oauth tokens of '${server}' not saved: ${firstIssueText(parsed.error)}`);
    const sealed = this.#key().seal(server, JSON.stringify(parsed.data));
    return this.write(
      server,
      {
        key_id: [sealed.keyId, 'text'],
        iv: [sealed.iv, 'bytea'],
        auth_tag: [sealed.authTag, 'bytea'],
        ciphertext: [sealed.ciphertext, 'bytea'],
      },
      { ifRevision },
    );
  }

  #open(row: SealedRow): OAuthRead {
    const opened = this.#key().open(row.key, { keyId: row.key_id, iv: row.iv, authTag: row.auth_tag, ciphertext: row.ciphertext });
    const revision = Number(row.revision);
    if (!opened.ok)
      return { key: row.key, state: 'unreadable', reason: `the stored tokens of '${row.key}' are ${opened.reason}`, revision };
    const parsed = OAUTH_KIND.schema.safeParse(JSON.parse(opened.text));
    if (!parsed.success)
      return {
        key: row.key,
        state: 'unreadable',
        reason: `the stored tokens of '${row.key}' are not valid: ${firstIssueText(parsed.error)}`,
        revision,
      };
    return { key: row.key, state: 'readable', value: parsed.data, revision };
  }

  // Tokens this replica cannot read may be readable with the right key: never replace them by accident.
  #refuseUnreadable(current: OAuthRead | undefined): void {
    if (current?.state !== 'unreadable') return;
    throw new LoadoutError(
      'STORE_SECRET_KEY',
      `${current.reason}; they were not overwritten: set LOADOUT_SECRET_KEY to the key that sealed them`,
    );
  }

  #key(): SecretBox {
    if (!this.#box) {
      throw new LoadoutError(
        'STORE_SECRET_KEY',
        'LOADOUT_SECRET_KEY is not set: the store keeps OAuth tokens encrypted with it (make one with `openssl rand -base64 32`)',
      );
    }
    return this.#box;
  }
}

async function retryConflicts<T>(kind: string, key: string, attempt: () => Promise<T>): Promise<T> {
  for (let n = 1; ; n++) {
    try {
      return await attempt();
    } catch (error) {
      if (!(error instanceof LoadoutError && error.code === 'STORE_CONFLICT') || n >= UPDATE_ATTEMPTS) {
        if (error instanceof LoadoutError && error.code === 'STORE_CONFLICT') {
          throw new LoadoutError('STORE_CONFLICT', `${kind} '${key}' kept changing under ${UPDATE_ATTEMPTS} attempts to update it`);
        }
        throw error;
      }
    }
  }
}
