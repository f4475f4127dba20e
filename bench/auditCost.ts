// Row 1l: what the audit trail costs a call. In process, with the trail as `serve` opens it (day
// files in a temp data dir): the CPU a call pays on its path (timing it and handing the event in
// after the answer), and the CPU each record costs when its batch is written (the arguments'
// canonical digest, the JSON line, the append), both per record over many calls of a typical
// tool call's arguments.
import { mkdtemp, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { openAuditTrail, type AuditEvent } from '../src/audit/index.js';
import { AuditSettingsSchema } from '../src/config/index.js';
import { issuedPrincipal } from '../src/identity/index.js';
import { silentLogger } from '../src/shared/index.js';
import type { BenchRow } from './report.js';
import type { BenchContext } from './scale.js';

const PRINCIPAL = issuedPrincipal('https://login.example.com', 'alice@example.com', ['engineering']);
const ARGUMENTS = { owner: 'acme', repo: 'widgets', title: 'Crash on start', body: 'Steps: run it. Expected: it starts.', labels: ['bug'] };

function cpuMicros(): number {
  const { user, system } = process.cpuUsage();
  return user + system;
}

/** Row 1l. */
export async function benchAuditCost(context: BenchContext): Promise<BenchRow[]> {
  const dataDir = await mkdtemp(path.join(tmpdir(), 'loadout-bench-audit-'));
  // The full bench makes ten times its sequential calls: a few µs each, read from a coarse clock.
  const calls = context.scale.sequentialCalls * 10;
  try {
    const trail = openAuditTrail(AuditSettingsSchema.parse({ flush_ms: 60_000 }), {
      dataDir,
      configDir: dataDir,
      logger: silentLogger,
      stdoutFree: false,
      replicaId: 'bench',
    });
    const onPathStart = cpuMicros();
    for (let n = 0; n < calls; n++) {
      const startedAt = Date.now();
      const started = performance.now();
      const event: AuditEvent = {
        startedAt,
        principal: PRINCIPAL,
        action: 'tool-call',
        method: 'tools/call',
        server: 'github',
        tool: 'create_issue',
        exposedTool: 'github_create_issue',
        arguments: ARGUMENTS,
        hasArguments: true,
        outcome: 'ok',
        durationMs: performance.now() - started,
        requestId: n,
      };
      trail.record(event);
    }
    const onPath = (cpuMicros() - onPathStart) / calls;
    const writeStart = cpuMicros();
    await trail.close();
    const written = (cpuMicros() - writeStart) / calls;
    return [
      {
        id: '1l',
        figure: `CPU per call of the audit trail: on the call's path, and writing its record in a batch (in process, n=${calls})`,
        loadout: `${onPath.toFixed(2)} µs on the path`,
        limit: `${written.toFixed(2)} µs per record written, after the answer`,
        target: '— (a forwarded call over stdio is ~47 µs of CPU: row 1f)',
        values: { onPathMicrosPerCall: onPath, writtenMicrosPerRecord: written },
      },
    ];
  } finally {
    await rm(dataDir, { recursive: true, force: true });
  }
}
