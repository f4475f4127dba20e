// The replicas of a fleet as `status --store` shows them: each `serve --http --store` replica
// writes a heartbeat row at start (id, host, pid, version, start, sessions, listening), removes it
// when it stops, and one silent for 30 s drops out of the list, in the JSON and the text form; its
// metrics carry the same id (service.instance.id) and whether its change bus listens.
import { writeFile } from 'node:fs/promises';
import path from 'node:path';
import parsePrometheusTextFormat from 'parse-prometheus-text-format';
import postgres from 'postgres';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { useFleet } from '../helpers/fleet.js';
import { fixture, nodeServer } from '../helpers/gateway.js';
import { startHttpGateway, type ListeningProcess } from '../helpers/http.js';
import { runCli } from '../helpers/cli.js';
import { createDatabase, postgresServerUrl } from '../helpers/postgres.js';
import { TEST_SECRET_KEY } from '../helpers/storeBackends.js';

interface ListedReplica {
  id: string;
  host: string;
  pid: number;
  version: string;
  started: string;
  lastHeard: string;
  sessions: number;
  listening: boolean;
}

describe('status --store lists the replicas serving on the store', () => {
  let database: Awaited<ReturnType<typeof createDatabase>>;
  beforeEach(async () => {
    database = await createDatabase(postgresServerUrl());
  });
  afterEach(() => database.drop());
  const fleet = useFleet<ListeningProcess>({ echo: nodeServer(fixture('echo')) });

  const status = async (json: boolean) =>
    runCli(fleet.dirs, ['--store', database.url, 'status', ...(json ? ['--json'] : [])], { env: { LOADOUT_SECRET_KEY: TEST_SECRET_KEY } });
  const listed = async (): Promise<ListedReplica[]> => {
    const run = await status(true);
    expect(run.code, run.stderr).toBe(0);
    return (JSON.parse(run.stdout) as { replicas: ListedReplica[] }).replicas;
  };

  it('shows each replica with its heartbeat, drops one that stopped, and one silent 30 s', async () => {
    await fleet.start(
      [0, 1, 2].map((index) =>
        startHttpGateway(
          { configDir: fleet.dirs.configDir, dataDir: path.join(fleet.dirs.root, `data-${index}`) },
          ['--store', database.url, ...(index === 0 ? ['--metrics', '--metrics-port', '0'] : [])],
          {
            LOADOUT_SECRET_KEY: TEST_SECRET_KEY,
          },
        ),
      ),
      (replica) => replica.url,
    );
    const pids = fleet.replicas.map((replica) => replica.pid);
    // A replica's first beat is written before it announces its URL.
    const replicas = await listed();
    expect(replicas.map((replica) => replica.pid).sort()).toEqual([...pids].sort());
    for (const replica of replicas) {
      expect(replica).toMatchObject({ sessions: 0, listening: true });
      expect(replica.id).toMatch(/^[\w-]{21}$/);
      expect(Date.parse(replica.lastHeard)).toBeGreaterThanOrEqual(Date.parse(replica.started) - 1000);
    }
    expect(new Set(replicas.map((replica) => replica.id)).size).toBe(3);

    // The text form: a table of them, never "No gateway running" while three serve.
    const text = await status(false);
    expect(text.stdout).toContain('3 replicas serving on postgres://');
    expect(text.stdout).not.toContain('No gateway running');
    for (const replica of replicas) expect(text.stdout).toContain(replica.id);

    // The replica's metrics name it by the same id, and say its change bus listens.
    const metricsUrl = /serving metrics at (\S+)/.exec(fleet.replicas[0]!.output())![1]!;
    const families = parsePrometheusTextFormat(await (await fetch(metricsUrl)).text());
    const sample = (name: string) => families.find((family) => family.name === name)?.metrics[0];
    expect(sample('target_info')?.labels?.service_instance_id).toBe(replicas.find((replica) => replica.pid === pids[0])!.id);
    expect(families.find((family) => family.name === 'loadout_store_listening')?.type).toBe('GAUGE');
    expect(Number(sample('loadout_store_listening')?.value)).toBe(1);

    // A replica that stops removes its row.
    await fleet.replicas[0]!.close();
    expect((await listed()).map((replica) => replica.pid).sort()).toEqual(pids.slice(1).sort());

    // One heard last 31 s ago (a replica that died without removing its row) is left out.
    const admin = postgres(database.url, { max: 1, onnotice: () => undefined });
    try {
      await admin`UPDATE replica_heartbeats SET last_heard = now() - interval '31 seconds' WHERE pid = ${pids[1]!}`;
    } finally {
      await admin.end();
    }
    expect((await listed()).map((replica) => replica.pid)).toEqual([pids[2]]);
  });

  it('says no replica serves on the store when none is heard from', async () => {
    const run = await status(false);
    expect(run.stdout).toMatch(/No replica serving on postgres:\/\/\S+ \(none heard from in the last 30 s/);
    expect(run.stdout).not.toContain('No gateway running');
    expect(JSON.parse((await status(true)).stdout)).toMatchObject({ replicas: [] });
    // With no server configured yet, the replicas are still told.
    await writeFile(path.join(fleet.dirs.configDir, 'servers.yaml'), 'servers: {}\n');
    expect((await status(false)).stdout).toMatch(/^No servers in .*\nNo replica serving on postgres:/m);
  });
});
