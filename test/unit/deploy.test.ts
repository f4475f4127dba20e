// Keeps the deploy files in deploy/ honest, since nothing here can build the image or apply the
// manifests: each is parsed (YAML with the `yaml` package, the Dockerfile and the systemd unit
// with a few lines of parser each) and checked for what can be checked without Docker or a
// cluster. Every flag they pass to `loadout` must be one the built CLI lists in its help, so a
// renamed option fails here; ports, probes, users and the stop timing must agree with each other.
import { execFileSync } from 'node:child_process';
import { readFile, readdir, writeFile } from 'node:fs/promises';
import path from 'node:path';
import { parseAllDocuments } from 'yaml';
import * as z from 'zod';
import { describe, expect, it } from 'vitest';
import { loadServersFile } from '../../src/config/index.js';
import { CLI, ROOT } from '../helpers/gateway.js';
import { useTempDir } from '../helpers/tempDir.js';

const DEPLOY = path.join(ROOT, 'deploy');
// What `serve` does with no --drain-seconds.
const DEFAULT_DRAIN_S = 30;

// The long options the built CLI's help lists: the program's own and serve's.
function cliOptions(): Set<string> {
  const help = (args: string[]): string => execFileSync(process.execPath, [CLI, ...args], { encoding: 'utf8' });
  const flags = [
    ...help(['--help']).matchAll(/^\s+(?:-\w, )?(--[\w-]+)/gm),
    ...help(['serve', '--help']).matchAll(/^\s+(?:-\w, )?(--[\w-]+)/gm),
  ];
  return new Set(flags.map((match) => match[1]!));
}

/** The flags of a `loadout serve …` argument list that the CLI does not know. */
function unknownFlags(args: readonly string[], known: ReadonlySet<string>): string[] {
  return args
    .filter((arg) => arg.startsWith('--'))
    .map((arg) => arg.split('=')[0]!)
    .filter((flag) => !known.has(flag));
}

/** The value after `flag` in `args`, if any. */
function flagValue(args: readonly string[], flag: string): string | undefined {
  const at = args.indexOf(flag);
  return at === -1 ? undefined : args[at + 1];
}

/** One Dockerfile instruction: its keyword and arguments (line continuations joined, comments dropped). */
interface Instruction {
  readonly keyword: string;
  readonly args: string;
}

function parseDockerfile(text: string): Instruction[] {
  const logical: string[] = [];
  let pending = '';
  for (const line of text.split('\n')) {
    if (/^\s*#/.test(line)) continue;
    const joined = pending + line;
    if (/\\\s*$/.test(line)) {
      pending = joined.replace(/\\\s*$/, ' ');
      continue;
    }
    pending = '';
    if (joined.trim()) logical.push(joined.trim());
  }
  return logical.map((line) => {
    const [keyword, ...rest] = line.split(/\s+/);
    return { keyword: keyword!.toUpperCase(), args: rest.join(' ') };
  });
}

// An exec-form (JSON array) CMD, ENTRYPOINT or HEALTHCHECK CMD.
function execForm(args: string): string[] {
  return z.array(z.string()).parse(JSON.parse(args));
}

// What the tests read of each manifest kind: loose (anything else may be there), strict where read.
const LabelsSchema = z.record(z.string(), z.string());
const EnvSchema = z.looseObject({
  name: z.string(),
  value: z.string().optional(),
  valueFrom: z.looseObject({ secretKeyRef: z.looseObject({ name: z.string(), key: z.string() }).optional() }).optional(),
});
const ContainerSchema = z.looseObject({
  command: z.array(z.string()).optional(),
  args: z.array(z.string()),
  env: z.array(EnvSchema),
  ports: z.array(z.looseObject({ name: z.string(), containerPort: z.number() })),
  readinessProbe: z.looseObject({ httpGet: z.looseObject({ path: z.string(), port: z.union([z.string(), z.number()]) }) }),
  livenessProbe: z.looseObject({ httpGet: z.looseObject({ path: z.string() }).optional() }).optional(),
  lifecycle: z.looseObject({ preStop: z.looseObject({ exec: z.looseObject({ command: z.array(z.string()) }) }) }),
  securityContext: z.looseObject({ allowPrivilegeEscalation: z.boolean() }),
  volumeMounts: z.array(z.looseObject({ name: z.string(), mountPath: z.string() })),
});
const DeploymentSchema = z.looseObject({
  kind: z.literal('Deployment'),
  spec: z.looseObject({
    replicas: z.number().int(),
    template: z.looseObject({
      metadata: z.looseObject({ labels: LabelsSchema }),
      spec: z.looseObject({
        terminationGracePeriodSeconds: z.number(),
        securityContext: z.looseObject({ runAsNonRoot: z.boolean(), runAsUser: z.number() }),
        containers: z.array(ContainerSchema).length(1),
        volumes: z.array(z.looseObject({ name: z.string(), configMap: z.looseObject({ name: z.string() }).optional() })),
      }),
    }),
  }),
});
const NamedSchema = z.looseObject({ metadata: z.looseObject({ name: z.string() }) });
const SecretSchema = NamedSchema.extend({ kind: z.literal('Secret'), stringData: z.record(z.string(), z.string()) });
const ConfigMapSchema = NamedSchema.extend({ kind: z.literal('ConfigMap'), data: z.record(z.string(), z.string()) });
const ServiceSchema = z.looseObject({
  kind: z.literal('Service'),
  spec: z.looseObject({ selector: LabelsSchema, ports: z.array(z.looseObject({ targetPort: z.union([z.string(), z.number()]) })) }),
});
const BudgetSchema = z.looseObject({
  kind: z.literal('PodDisruptionBudget'),
  spec: z.looseObject({
    maxUnavailable: z.number().optional(),
    minAvailable: z.number().optional(),
    selector: z.looseObject({ matchLabels: LabelsSchema }),
  }),
});
const SCHEMAS = {
  Deployment: DeploymentSchema,
  Secret: SecretSchema,
  ConfigMap: ConfigMapSchema,
  Service: ServiceSchema,
  PodDisruptionBudget: BudgetSchema,
} as const;
type Kind = keyof typeof SCHEMAS;

// Every document of deploy/kubernetes/*.yaml but the kustomization, each parsed by its kind's schema.
async function manifests(): Promise<Array<{ kind: string }>> {
  const dir = path.join(DEPLOY, 'kubernetes');
  const files = (await readdir(dir)).filter((name) => name.endsWith('.yaml') && name !== 'kustomization.yaml');
  const all: Array<{ kind: string }> = [];
  for (const file of files) {
    for (const document of parseAllDocuments(await readFile(path.join(dir, file), 'utf8'))) {
      expect(document.errors, file).toEqual([]);
      all.push(z.looseObject({ kind: z.string() }).parse(document.toJS()));
    }
  }
  return all;
}

/** The one manifest of `kind`, parsed by its schema. */
async function manifest<K extends Kind>(kind: K): Promise<z.infer<(typeof SCHEMAS)[K]>> {
  const found = (await manifests()).filter((each) => each.kind === kind);
  expect(found, kind).toHaveLength(1);
  return SCHEMAS[kind].parse(found[0]) as z.infer<(typeof SCHEMAS)[K]>;
}

const known = cliOptions();

describe('deploy/Dockerfile', () => {
  const read = async () => parseDockerfile(await readFile(path.join(DEPLOY, 'Dockerfile'), 'utf8'));

  it('builds in a node:20-slim stage with npm ci and npm run build, and runs on a clean node:20-slim', async () => {
    const instructions = await read();
    const stages = instructions.filter((each) => each.keyword === 'FROM').map((each) => each.args.split(/\s+/)[0]);
    expect(stages.length).toBeGreaterThanOrEqual(2);
    for (const image of stages) expect(image).toBe('node:20-slim');
    const lastFrom = instructions.map((each) => each.keyword).lastIndexOf('FROM');
    const build = instructions
      .slice(0, lastFrom)
      .filter((each) => each.keyword === 'RUN')
      .map((each) => each.args)
      .join(' && ');
    expect(build).toMatch(/\bnpm ci\b/);
    expect(build).toMatch(/\bnpm run build\b/);
    // The final stage takes only what the build stage packed.
    expect(instructions.slice(lastFrom).some((each) => each.keyword === 'COPY' && each.args.startsWith('--from=build'))).toBe(true);
  });

  it('runs `loadout serve --http` as a user other than root, on the ports it exposes, with real flags', async () => {
    const final = (await read()).slice((await read()).map((each) => each.keyword).lastIndexOf('FROM'));
    const last = (keyword: string) => final.filter((each) => each.keyword === keyword).at(-1)?.args;
    const user = last('USER');
    expect(user).toBeDefined();
    expect(['root', '0']).not.toContain(user!.split(':')[0]);
    const command = [...execForm(last('ENTRYPOINT')!), ...execForm(last('CMD')!)];
    expect(command.slice(0, 3)).toEqual(['loadout', 'serve', '--http']);
    expect(unknownFlags(command, known)).toEqual([]);
    const exposed = final.filter((each) => each.keyword === 'EXPOSE').flatMap((each) => each.args.split(/\s+/));
    expect(exposed).toContain(flagValue(command, '--port'));
    expect(exposed).toContain(flagValue(command, '--metrics-port'));
    // The health check asks /healthz on the port served.
    const health = last('HEALTHCHECK')!;
    expect(health).toContain(`:${flagValue(command, '--port')}/healthz`);
  });
});

describe('deploy/kubernetes', () => {
  it('runs loadout serve --http --store with real flags, non-root, ready on /healthz, on the ports it serves', async () => {
    const pod = (await manifest('Deployment')).spec.template.spec;
    const container = pod.containers[0]!;
    const args = [...(container.command ?? []), ...container.args];
    expect(args.slice(0, 2)).toEqual(['serve', '--http']);
    expect(unknownFlags(args, known)).toEqual([]);
    // Non-root, with a user id (an image's USER name cannot be checked against runAsNonRoot).
    expect(pod.securityContext.runAsNonRoot).toBe(true);
    expect(pod.securityContext.runAsUser).toBeGreaterThan(0);
    expect(container.securityContext.allowPrivilegeEscalation).toBe(false);
    // Ports: --port is the container's `mcp` port, --metrics-port its `metrics` one.
    const port = (name: string) => container.ports.find((each) => each.name === name)?.containerPort;
    expect(String(port('mcp'))).toBe(flagValue(args, '--port'));
    expect(String(port('metrics'))).toBe(flagValue(args, '--metrics-port'));
    // Readiness on /healthz (serving and listening to the store); liveness not on it.
    expect(container.readinessProbe.httpGet).toMatchObject({ path: '/healthz', port: 'mcp' });
    expect(container.livenessProbe?.httpGet?.path).not.toBe('/healthz');
    // The store and the key come from the Secret, by keys it has; servers.yaml from the ConfigMap, where loadout reads it.
    const secret = await manifest('Secret');
    const env = new Map(container.env.map((each) => [each.name, each]));
    for (const name of ['LOADOUT_STORE_URL', 'LOADOUT_SECRET_KEY']) {
      const ref = env.get(name)?.valueFrom?.secretKeyRef;
      expect(ref?.name, name).toBe(secret.metadata.name);
      expect(Object.keys(secret.stringData)).toContain(ref?.key);
    }
    const configMap = await manifest('ConfigMap');
    const volume = pod.volumes.find((each) => each.configMap?.name === configMap.metadata.name);
    const mount = container.volumeMounts.find((each) => each.name === volume?.name);
    expect(mount).toBeDefined();
    expect(flagValue(args, '--config') ?? env.get('LOADOUT_CONFIG_DIR')?.value).toBe(mount!.mountPath);
  });

  it('waits out the preStop hook and the drain before the kill', async () => {
    const pod = (await manifest('Deployment')).spec.template.spec;
    const container = pod.containers[0]!;
    const drainS = Number(flagValue(container.args, '--drain-seconds') ?? DEFAULT_DRAIN_S);
    const [sleep, seconds] = container.lifecycle.preStop.exec.command;
    expect(sleep).toBe('sleep');
    const preStopS = Number(seconds);
    expect(preStopS).toBeGreaterThan(0);
    // The grace period runs from the preStop hook's start: the hook, then SIGTERM's drain, then a close under 5 s.
    expect(pod.terminationGracePeriodSeconds).toBeGreaterThanOrEqual(preStopS + drainS + 5);
  });

  it('publishes only the MCP port, and keeps all but one replica up through a disruption', async () => {
    const deployment = await manifest('Deployment');
    const labels = deployment.spec.template.metadata.labels;
    const service = await manifest('Service');
    expect(labels).toMatchObject(service.spec.selector);
    // The metrics port is the pod network's (the scraper's), never the Service's.
    expect(service.spec.ports.map((each) => each.targetPort)).toEqual(['mcp']);
    const budget = await manifest('PodDisruptionBudget');
    expect(labels).toMatchObject(budget.spec.selector.matchLabels);
    const unavailable = budget.spec.maxUnavailable ?? deployment.spec.replicas - (budget.spec.minAvailable ?? 0);
    expect(unavailable).toBeGreaterThan(0);
    expect(unavailable).toBeLessThan(deployment.spec.replicas);
  });

  const dir = useTempDir('loadout-deploy-');
  it('holds a servers.yaml loadout reads, and the kustomization lists every manifest', async () => {
    const file = path.join(dir(), 'servers.yaml');
    await writeFile(file, (await manifest('ConfigMap')).data['servers.yaml'] ?? '');
    const { config, brokenServers } = await loadServersFile(file);
    expect(brokenServers.size).toBe(0);
    expect(Object.keys(config.servers).length).toBeGreaterThan(0);
    const kustomization = z
      .looseObject({ resources: z.array(z.string()) })
      .parse(parseAllDocuments(await readFile(path.join(DEPLOY, 'kubernetes', 'kustomization.yaml'), 'utf8'))[0]?.toJS());
    const files = (await readdir(path.join(DEPLOY, 'kubernetes'))).filter((name) => name !== 'kustomization.yaml');
    expect([...kustomization.resources].sort()).toEqual(files.sort());
  });
});

describe('deploy/systemd/loadout.service', () => {
  // [Section] key=value, the last of a key winning (Environment= lines are kept apart by name).
  const parseUnit = (text: string): Map<string, string[]> => {
    const entries = new Map<string, string[]>();
    let section = '';
    for (const line of text.split('\n').map((each) => each.trim())) {
      if (!line || line.startsWith('#') || line.startsWith(';')) continue;
      const header = /^\[(.+)\]$/.exec(line);
      if (header) {
        section = header[1]!;
        continue;
      }
      const at = line.indexOf('=');
      const key = `${section}.${line.slice(0, at)}`;
      entries.set(key, [...(entries.get(key) ?? []), line.slice(at + 1)]);
    }
    return entries;
  };

  it('runs loadout serve --http with real flags as its own user, and waits out the drain on stop', async () => {
    const unit = parseUnit(await readFile(path.join(DEPLOY, 'systemd', 'loadout.service'), 'utf8'));
    const value = (key: string): string | undefined => unit.get(key)?.at(-1);
    const command = value('Service.ExecStart')!.split(/\s+/);
    expect(path.basename(command[0]!)).toBe('loadout');
    expect(command.slice(1, 3)).toEqual(['serve', '--http']);
    expect(unknownFlags(command, known)).toEqual([]);
    expect(value('Service.User')).toBeDefined();
    expect(['root', '0']).not.toContain(value('Service.User'));
    const drainS = Number(flagValue(command, '--drain-seconds') ?? DEFAULT_DRAIN_S);
    expect(Number(value('Service.TimeoutStopSec'))).toBeGreaterThanOrEqual(drainS + 5);
    expect(value('Service.KillSignal') ?? 'SIGTERM').toBe('SIGTERM');
    // The data dir is the one systemd makes writable for it (ProtectSystem=strict leaves the rest read-only).
    const dataDir = unit.get('Service.Environment')?.find((each) => each.startsWith('LOADOUT_DATA_DIR='));
    expect(dataDir).toBe(`LOADOUT_DATA_DIR=/var/lib/${value('Service.StateDirectory')}`);
  });
});
