// The team store's statements, measured: with telemetry on, each table's reads, lists, saves and
// deletes are recorded in db.client.operation.duration (the database conventions' histogram),
// and one that fails carries its error code; exported over OTLP to a receiver in this process.
import postgres from 'postgres';
import { afterAll, beforeAll, describe, expect, it, vi } from 'vitest';
import { silentLogger } from '../../src/shared/index.js';
import { openPostgresStore } from '../../src/store/index.js';
import { startTelemetry, type Telemetry } from '../../src/telemetry/index.js';
import { eventually } from '../helpers/gateway.js';
import { startOtlpReceiver, type OtlpReceiver } from '../helpers/otlpReceiver.js';
import { usePostgresDatabase } from '../helpers/postgres.js';

const databaseUrl = usePostgresDatabase();
let receiver: OtlpReceiver;
let telemetry: Telemetry;
beforeAll(async () => {
  receiver = await startOtlpReceiver();
  // The SDK's exporters read their endpoint from the process's environment.
  vi.stubEnv('OTEL_EXPORTER_OTLP_ENDPOINT', receiver.url);
  vi.stubEnv('OTEL_EXPORTER_OTLP_PROTOCOL', 'http/json');
  vi.stubEnv('OTEL_TRACES_EXPORTER', 'none');
  vi.stubEnv('OTEL_METRIC_EXPORT_INTERVAL', '100');
  telemetry = await startTelemetry({ prometheus: false, logger: silentLogger });
});
afterAll(async () => {
  await telemetry.close();
  await receiver.close();
  vi.unstubAllEnvs();
});

describe('team store telemetry', () => {
  it('records each statement by table and operation, and a failed one with its error code', async () => {
    expect(telemetry.enabled).toBe(true);
    const store = await openPostgresStore({ url: databaseUrl(), listen: false, telemetry });
    try {
      await store.toolsets.put('dev', { name: 'dev', tools: [] });
      expect((await store.toolsets.get('dev'))?.value).toEqual({ name: 'dev', tools: [] });
      expect(await store.toolsets.list()).toHaveLength(1);
      expect(await store.toolsets.delete('dev')).toBe(true);
      // A table gone from under the store: the statement fails, and says so.
      const admin = postgres(databaseUrl(), { max: 1, onnotice: () => undefined });
      await admin`DROP TABLE learned_words CASCADE`.finally(() => admin.end());
      await expect(store.learnedWords.list()).rejects.toThrow(/cannot list learnedWords/);
    } finally {
      await store.close();
    }
    const measured = () => receiver.metricPoints.filter((point) => point.name === 'db.client.operation.duration');
    const seen = (attributes: Record<string, string>) =>
      measured().some((point) => Object.entries(attributes).every(([key, value]) => point.attributes[key] === value));
    await eventually(() => seen({ 'db.collection.name': 'learned_words' }), 10_000, 'the store metric exported');
    for (const operation of ['save', 'read', 'list', 'delete'])
      expect(seen({ 'db.system.name': 'postgresql', 'db.collection.name': 'toolsets', 'db.operation.name': operation }), operation).toBe(
        true,
      );
    expect(measured().find((point) => point.attributes['db.collection.name'] === 'toolsets')?.attributes).not.toHaveProperty('error.type');
    expect(seen({ 'db.collection.name': 'learned_words', 'db.operation.name': 'list', 'error.type': 'STORE_UNAVAILABLE' })).toBe(true);
  });
});
