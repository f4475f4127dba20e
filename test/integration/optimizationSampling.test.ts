import { Client, InMemoryTransport } from '@modelcontextprotocol/client';
import type { CreateMessageRequest, ClientCapabilities } from '@modelcontextprotocol/client';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { resolvePaths } from '../../src/config/index.js';
import { createGateway, type Gateway } from '../../src/gateway/index.js';
import { silentLogger } from '../../src/shared/index.js';
import { fixture, makeTempDirs, nodeServer, textOf, writeServersYaml, type TempDirs } from '../helpers/gateway.js';
import { GOLDEN_PROMPTS, GOOD_CANDIDATE, samplingAnswer } from '../helpers/optimization.js';

describe('the sampling backend', () => {
  let dirs: TempDirs;
  let gateway: Gateway;
  let requests: Array<CreateMessageRequest['params']>;
  beforeEach(async () => {
    dirs = await makeTempDirs();
    requests = [];
    await writeServersYaml(dirs.configDir, { echo: nodeServer(fixture('echo')) }, { optimization: { expose_tools: true } });
    gateway = await createGateway({ paths: resolvePaths({ configDir: dirs.configDir, dataDir: dirs.dataDir }), logger: silentLogger });
  });
  afterEach(async () => {
    await gateway.close();
    await dirs.cleanup();
  });

  async function connect(capabilities: ClientCapabilities): Promise<Client> {
    const [clientSide, serverSide] = InMemoryTransport.createLinkedPair();
    const client = new Client({ name: 'sampling-test', version: '1.0.0' }, { capabilities });
    if (capabilities.sampling) {
      client.setRequestHandler('sampling/createMessage', (request) => {
        requests.push(request.params);
        return samplingAnswer(request.params);
      });
    }
    await gateway.connect(serverSide);
    await client.connect(clientSide);
    return client;
  }

  async function runLoop(client: Client): Promise<{ overall: number; baseline: number }> {
    await client.callTool({ name: 'propose_candidate', arguments: { server: 'echo', tool: 'echo', description: GOOD_CANDIDATE } });
    await client.callTool({ name: 'save_golden_prompts', arguments: { server: 'echo', tool: 'echo', prompts: GOLDEN_PROMPTS } });
    const result = await client.callTool({ name: 'run_evaluation', arguments: { server: 'echo', tool: 'echo' } });
    expect(result.isError).toBeFalsy();
    const summary = JSON.parse(textOf(result)) as {
      backend: string;
      baseline: { overall: number };
      candidates: Array<{ metrics: { overall: number } }>;
    };
    expect(summary.backend).toBe('sampling');
    return { overall: summary.candidates[0]!.metrics.overall, baseline: summary.baseline.overall };
  }

  it('evaluates through sampling/createMessage with native tools when the client declares sampling.tools', async () => {
    const client = await connect({ sampling: { tools: {} } });
    expect(await runLoop(client)).toEqual({ overall: 1, baseline: 1 / 3 });
    expect(requests).toHaveLength(30);
    expect(requests[0]!.tools?.map((t) => t.name)).toContain('echo_echo');
    await client.close();
  });

  it('falls back to a JSON choice in text when the client samples without tools, and generates prompts', async () => {
    const client = await connect({ sampling: {} });
    expect(await runLoop(client)).toEqual({ overall: 1, baseline: 1 / 3 });
    expect(requests[0]!.tools).toBeUndefined();
    const generated = await client.callTool({
      name: 'generate_golden_prompts',
      arguments: { server: 'echo', tool: 'echo', directCount: 1, indirectCount: 1, negativeCount: 1 },
    });
    expect(JSON.parse(textOf(generated))).toMatchObject({ saved: 3 });
    await client.close();
  });

  it('says how to configure a backend when the client cannot sample', async () => {
    const client = await connect({});
    const result = await client.callTool({ name: 'generate_candidates', arguments: { server: 'echo', tool: 'echo' } });
    expect(result.isError).toBe(true);
    expect(textOf(result)).toMatch(/^No model backend is configured/);
    await client.close();
  });
});
