import { readFile, readdir, writeFile, mkdir, rm, stat } from 'node:fs/promises';
import { createHash } from 'node:crypto';
import path from 'node:path';
import { describe, expect, it, vi } from 'vitest';
import { useTempDir } from '../../test/helpers/tempDir.js';
import { AuditSettingsSchema } from '../config/index.js';
import { issuedPrincipal } from '../identity/index.js';
import { silentLogger, type Logger } from '../shared/index.js';
import { argumentsDigest, auditRecordOf, type AuditEvent } from './auditRecord.js';
import { readAuditTrail } from './auditReader.js';
import { dayFilesSink, linesFileSink, type AuditSink, type DayLines } from './auditSinks.js';
import { AuditTrail, openAuditTrail } from './auditTrail.js';

// A day's records as the trail hands them to a sink: the calls of `requestIds`, each with its JSON.
function dayOf(day: string, requestIds: number[]): DayLines {
  return {
    day,
    records: requestIds.map((requestId) => {
      const record = auditRecordOf(callEvent({ requestId }), false, stampOf(requestId));
      return { record, json: JSON.stringify(record) };
    }),
  };
}

// The JSON lines of the calls of `requestIds`, as a file sink writes them.
function linesOf(requestIds: number[]): string {
  return requestIds.map((requestId) => `${JSON.stringify(auditRecordOf(callEvent({ requestId }), false, stampOf(requestId)))}\n`).join('');
}

// The stamp the trail of replica `r` gives its `n`th record.
const stampOf = (n: number) => ({ id: `r.${n}`, replica: 'r' });

const alice = issuedPrincipal('https://idp.example', 'alice', ['eng']);

function callEvent(overrides: Partial<AuditEvent> = {}): AuditEvent {
  return {
    startedAt: Date.parse('2026-05-01T10:00:00Z'),
    principal: alice,
    action: 'tool-call',
    method: 'tools/call',
    server: 'github',
    tool: 'create_issue',
    exposedTool: 'github_create_issue',
    arguments: { title: 'x', labels: ['a'] },
    hasArguments: true,
    outcome: 'ok',
    durationMs: 12.5,
    requestId: 7,
    ...overrides,
  };
}

function logSpy(): Logger & { lines: Array<{ level: string; fields: object; message?: string }> } {
  const lines: Array<{ level: string; fields: object; message?: string }> = [];
  const at =
    (level: string) =>
    (fields: object | string, message?: string): void =>
      void lines.push({ level, fields: typeof fields === 'string' ? {} : fields, message: typeof fields === 'string' ? fields : message });
  const logger: Logger = { level: 'info', child: () => logger, error: at('error'), warn: at('warn'), info: at('info'), debug: at('debug') };
  return Object.assign(logger, { lines });
}

// The trail `audit:` settings ask for, writing in `dir` (as data and config dir).
function trailIn(dir: string, settings: Record<string, unknown>): AuditTrail {
  return openAuditTrail(AuditSettingsSchema.parse(settings), {
    dataDir: dir,
    configDir: dir,
    logger: silentLogger,
    stdoutFree: false,
    replicaId: 'r',
  });
}

describe('AuditTrail', () => {
  const dir = useTempDir('loadout-audit-');

  it('writes nothing on the call path: records wait for the timer, then go in one batch to the day file', async () => {
    vi.useFakeTimers({ toFake: ['setTimeout', 'clearTimeout'] });
    try {
      const trail = trailIn(dir(), { flush_ms: 500 });
      trail.record(callEvent());
      trail.record(callEvent({ requestId: 8, outcome: 'error' }));
      await expect(readdir(path.join(dir(), 'audit'))).rejects.toThrow(/ENOENT/);
      await vi.advanceTimersByTimeAsync(500);
      await trail.flush();
      const lines = (await readFile(path.join(dir(), 'audit', 'audit-2026-05-01.jsonl'), 'utf8')).trimEnd().split('\n');
      expect(lines.map((line) => JSON.parse(line) as unknown)).toEqual([
        {
          time: '2026-05-01T10:00:00.000Z',
          id: 'r.1',
          replica: 'r',
          principal: { id: alice.id, issuer: 'https://idp.example', subject: 'alice', groups: ['eng'] },
          action: 'tool-call',
          method: 'tools/call',
          server: 'github',
          tool: 'create_issue',
          exposed_tool: 'github_create_issue',
          arguments_sha256: argumentsDigest({ labels: ['a'], title: 'x' }),
          outcome: 'ok',
          duration_ms: 12.5,
          request_id: 7,
        },
        expect.objectContaining({ id: 'r.2', request_id: 8, outcome: 'error' }),
      ]);
      // The line's keys in the documented order: a reader diffing day files sees one layout.
      expect(Object.keys(JSON.parse(lines[0]!) as object)).toEqual([
        'time',
        'id',
        'replica',
        'principal',
        'action',
        'method',
        'server',
        'tool',
        'exposed_tool',
        'arguments_sha256',
        'outcome',
        'duration_ms',
        'request_id',
      ]);
    } finally {
      vi.useRealTimers();
    }
  });

  it('digests arguments by their canonical JSON, and keeps them only when asked to', async () => {
    expect(argumentsDigest({})).toBe('44136fa355b3678a1146ad16f7e8649e94fb4fc21fe77e8310c060f61caaff8a'); // sha256('{}')
    expect(argumentsDigest({ b: 1, a: [1, 'x'] })).toBe(argumentsDigest({ a: [1, 'x'], b: 1 }));
    expect(argumentsDigest({ a: 1 })).not.toBe(argumentsDigest({ a: 2 }));
    const trail = trailIn(dir(), { arguments: true });
    trail.record(callEvent({ arguments: undefined }));
    trail.record(
      callEvent({ hasArguments: false, arguments: undefined, action: 'request', outcome: 'denied-authorization', principal: undefined }),
    );
    await trail.close();
    const { records } = await readAuditTrail(dir());
    expect(records[0]).toMatchObject({ arguments_sha256: argumentsDigest({}), arguments: {} });
    expect(records[1]).toMatchObject({ principal: null, outcome: 'denied-authorization' });
    expect(records[1]).not.toHaveProperty('arguments_sha256');
  });

  it('digests and writes a record of arguments 1,000,000 levels deep, keeping the digest and not the arguments', async () => {
    const depth = 1_000_000;
    const deep = JSON.parse(`{"a":${'['.repeat(depth)}${']'.repeat(depth)}}`) as unknown;
    const digest = createHash('sha256')
      .update(`{"a":${'['.repeat(depth)}${']'.repeat(depth)}}`)
      .digest('hex');
    expect(argumentsDigest(deep)).toBe(digest);
    const trail = trailIn(dir(), { arguments: true });
    trail.record(callEvent({ arguments: deep, requestId: 1 }));
    trail.record(callEvent({ requestId: 2 }));
    await trail.close();
    const { records } = await readAuditTrail(dir());
    expect(records.map((record) => record.request_id)).toEqual([1, 2]);
    expect(records[0]!.arguments_sha256).toBe(digest);
    expect(records[0]).not.toHaveProperty('arguments');
    expect(records[1]).toHaveProperty('arguments', { title: 'x', labels: ['a'] });
  });

  it('digests a string with a lone surrogate instead of throwing', () => {
    expect(argumentsDigest({ text: '\ud800' })).toBe(createHash('sha256').update('{"text":"\\ud800"}').digest('hex'));
  });

  it('reports a sink that fails once, with its cause, goes on with the others, and says when it is back', async () => {
    const log = logSpy();
    let failing = true;
    const written: string[] = [];
    const flaky: AuditSink = {
      name: 'flaky',
      write: (batch) =>
        failing
          ? Promise.reject(new Error('disk full'))
          : Promise.resolve(void written.push(...batch.flatMap((b) => b.records.map((r) => r.json)))),
    };
    const kept: string[] = [];
    const steady: AuditSink = {
      name: 'steady',
      write: (batch) => Promise.resolve(void kept.push(...batch.flatMap((b) => b.records.map((r) => r.json)))),
    };
    const trail = new AuditTrail({ sinks: [flaky, steady], withArguments: false, flushMs: 1000, logger: log, replica: 'r' });
    for (let batch = 0; batch < 3; batch++) {
      trail.record(callEvent());
      await trail.flush();
    }
    expect(log.lines.filter((line) => line.level === 'error')).toEqual([
      {
        level: 'error',
        fields: expect.objectContaining({ sink: 'flaky', err: 'disk full' }) as object,
        message: expect.any(String) as string,
      },
    ]);
    expect(kept).toHaveLength(3);
    failing = false;
    trail.record(callEvent());
    await trail.close();
    expect(written).toHaveLength(1);
    expect(log.lines.filter((line) => line.level === 'warn')).toEqual([
      {
        level: 'warn',
        fields: expect.objectContaining({ sink: 'flaky', lostRecords: 3 }) as object,
        message: expect.any(String) as string,
      },
    ]);
    // Closed: nothing more is taken.
    trail.record(callEvent());
    await trail.flush();
    expect(kept).toHaveLength(4);
  });

  it('refuses a copy to stdout where stdout is the protocol, and writes a copy to a file', async () => {
    const places = { dataDir: dir(), configDir: dir(), logger: silentLogger, stdoutFree: false, replicaId: 'r' };
    expect(() => openAuditTrail(AuditSettingsSchema.parse({ copy_to: 'stdout' }), places)).toThrow(
      /audit\.copy_to: stdout needs `serve --http`/,
    );
    const trail = openAuditTrail(AuditSettingsSchema.parse({ copy_to: 'siem.jsonl' }), places);
    trail.record(callEvent());
    await trail.close();
    const copy = await readFile(path.join(dir(), 'siem.jsonl'), 'utf8');
    expect(copy).toBe(await readFile(path.join(dir(), 'audit', 'audit-2026-05-01.jsonl'), 'utf8'));
  });

  it('hands a sink each record with its JSON, split by UTC day, and no lines joined for it', async () => {
    const batches: Array<readonly DayLines[]> = [];
    const sink: AuditSink = { name: 'store-like', write: (batch) => Promise.resolve(void batches.push(batch)) };
    const trail = new AuditTrail({ sinks: [sink], withArguments: false, flushMs: 1000, logger: silentLogger, replica: 'r' });
    trail.record(callEvent());
    trail.record(callEvent({ startedAt: Date.parse('2026-05-02T00:00:01Z'), requestId: 8 }));
    await trail.close();
    expect(batches).toHaveLength(1);
    expect(batches[0]!.map((lines) => Object.keys(lines).sort())).toEqual([
      ['day', 'records'],
      ['day', 'records'],
    ]);
    // Each JSON is its record's, byte for byte.
    expect(
      batches[0]!.map(({ day, records }) => [day, records.map(({ record, json }) => [record.request_id, json === JSON.stringify(record)])]),
    ).toEqual([
      ['2026-05-01', [[7, true]]],
      ['2026-05-02', [[8, true]]],
    ]);
  });

  it('keeps nothing when audit.enabled is false', async () => {
    const trail = trailIn(dir(), { enabled: false });
    trail.record(callEvent());
    await trail.close();
    expect(trail.enabled).toBe(false);
    expect(await readdir(dir())).toEqual([]);
  });

  it('deletes day files older than retention_days when a new day begins', async () => {
    const audit = path.join(dir(), 'audit');
    await mkdir(audit);
    for (const day of ['2026-04-28', '2026-04-29', '2026-04-30']) await writeFile(path.join(audit, `audit-${day}.jsonl`), '');
    await writeFile(path.join(audit, 'notes.txt'), 'mine');
    const trail = trailIn(dir(), { retention_days: 2 });
    trail.record(callEvent());
    await trail.close();
    expect((await readdir(audit)).sort()).toEqual(['audit-2026-04-30.jsonl', 'audit-2026-05-01.jsonl', 'notes.txt']);
  });
});

describe('dayFilesSink', () => {
  const dir = useTempDir('loadout-audit-days-');

  it('writes alongside another process on the same data dir, whichever deletes an old day first', async () => {
    await writeFile(path.join(dir(), 'audit-2026-01-01.jsonl'), '');
    const batch = [dayOf('2026-05-01', [1])];
    await Promise.all([dayFilesSink(dir(), 30).write(batch), dayFilesSink(dir(), 30).write(batch)]);
    expect(await readdir(dir())).toEqual(['audit-2026-05-01.jsonl']);
    expect(await readFile(path.join(dir(), 'audit-2026-05-01.jsonl'), 'utf8')).toBe(linesOf([1, 1]));
  });

  it('makes its folder again when it was removed while loadout runs, and the next records land in it', async () => {
    const audit = path.join(dir(), 'audit');
    const sink = dayFilesSink(audit, 30);
    await sink.write([dayOf('2026-05-01', [1])]);
    await rm(audit, { recursive: true });
    // The same day (the folder no longer there to append to), then a new one (its old days looked through).
    await sink.write([dayOf('2026-05-01', [2])]);
    await sink.write([dayOf('2026-05-02', [3])]);
    expect((await stat(audit)).mode & 0o777).toBe(0o700);
    expect(await readFile(path.join(audit, 'audit-2026-05-01.jsonl'), 'utf8')).toBe(linesOf([2]));
    expect(await readFile(path.join(audit, 'audit-2026-05-02.jsonl'), 'utf8')).toBe(linesOf([3]));
    expect((await stat(path.join(audit, 'audit-2026-05-02.jsonl'))).mode & 0o777).toBe(0o600);
  });
});

describe('file sinks', () => {
  const dir = useTempDir('loadout-audit-lines-');

  it("write each record's JSON as one line: each day to its day file, the whole batch to a copy", async () => {
    const batch = [dayOf('2026-05-01', [1, 2]), dayOf('2026-05-02', [3])];
    await dayFilesSink(dir(), 0).write(batch);
    await linesFileSink(path.join(dir(), 'copy.jsonl')).write(batch);
    expect(await readFile(path.join(dir(), 'audit-2026-05-01.jsonl'), 'utf8')).toBe(linesOf([1, 2]));
    expect(await readFile(path.join(dir(), 'audit-2026-05-02.jsonl'), 'utf8')).toBe(linesOf([3]));
    expect(await readFile(path.join(dir(), 'copy.jsonl'), 'utf8')).toBe(linesOf([1, 2, 3]));
  });
});

describe('readAuditTrail', () => {
  const dir = useTempDir('loadout-audit-read-');

  it('reads the day files in order, filters by principal, server and time, and counts a cut-short line', async () => {
    const trail = trailIn(dir(), { retention_days: 0 });
    const bob = issuedPrincipal('https://idp.example', 'bob', []);
    trail.record(callEvent({ startedAt: Date.parse('2026-05-02T08:00:00Z'), principal: bob, server: 'files' }));
    trail.record(callEvent());
    trail.record(callEvent({ startedAt: Date.parse('2026-05-02T09:00:00Z') }));
    await trail.close();
    await writeFile(path.join(dir(), 'audit', 'audit-2026-05-02.jsonl'), '{"time":"2026-05-02T09:', { flag: 'a' });
    const all = await readAuditTrail(dir());
    expect(all.records.map((record) => record.time)).toEqual([
      '2026-05-01T10:00:00.000Z',
      '2026-05-02T08:00:00.000Z',
      '2026-05-02T09:00:00.000Z',
    ]);
    expect(all.unreadableLines).toBe(1);
    expect((await readAuditTrail(dir(), { principal: 'bob' })).records).toHaveLength(1);
    expect((await readAuditTrail(dir(), { principal: alice.id })).records).toHaveLength(2);
    expect((await readAuditTrail(dir(), { server: 'files' })).records).toHaveLength(1);
    expect((await readAuditTrail(dir(), { sinceMs: Date.parse('2026-05-02T08:30:00Z') })).records).toHaveLength(1);
  });

  it('reads an empty trail where none was written', async () => {
    expect(await readAuditTrail(dir())).toEqual({ records: [], unreadableLines: 0 });
  });
});
