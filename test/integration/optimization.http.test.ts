import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { fixture, nodeServer, textOf, writeServersYaml } from '../helpers/gateway.js';
import { httpHarness, type HttpHarness } from '../helpers/http.js';
import { GOLDEN_PROMPTS, GOOD_CANDIDATE, samplingAnswer } from '../helpers/optimization.js';

describe('optimization over loadout serve --http', () => {
  let harness: HttpHarness;
  beforeEach(async () => {
    harness = await httpHarness();
    await writeServersYaml(harness.dirs.configDir, { echo: nodeServer(fixture('echo')) }, { optimization: { expose_tools: true } });
  });
  afterEach(() => harness.teardown());

  it('notifies exactly the sessions that expose the promoted tool, once each', async () => {
    await harness.start();
    const alice = await harness.connect();
    const bob = await harness.connect();
    await alice.client.callTool({ name: 'build-toolset', arguments: { name: 'words', tools: ['echo.echo'], equip: true } });
    await bob.client.callTool({ name: 'build-toolset', arguments: { name: 'math', tools: ['echo.add'], equip: true } });
    await alice.waitForListChanged(1);
    await bob.waitForListChanged(1);

    const proposed = JSON.parse(
      textOf(
        await bob.client.callTool({ name: 'propose_candidate', arguments: { server: 'echo', tool: 'echo', description: GOOD_CANDIDATE } }),
      ),
    ) as { candidateId: string };
    const promoted = await bob.client.callTool({
      name: 'promote_candidate',
      arguments: { server: 'echo', tool: 'echo', candidateId: proposed.candidateId, force: true },
    });
    expect(promoted.isError).toBeFalsy();
    await alice.waitForListChanged(2);
    expect((await alice.client.listTools()).tools.find((t) => t.name === 'echo_echo')?.description).toBe(GOOD_CANDIDATE);
    // A revert is the next change, so a second notice of the promotion would come before its one.
    await bob.client.callTool({ name: 'revert_optimization', arguments: { server: 'echo', tool: 'echo' } });
    await alice.waitForListChanged(3);
    expect(alice.listChangedCount()).toBe(3);
    expect(bob.listChangedCount()).toBe(1);
  });

  it("evaluates through the calling session's sampling when no backend is configured", async () => {
    await harness.start();
    const samplingRequests: string[] = [];
    const carol = await harness.connect({ capabilities: { sampling: { tools: {} } } });
    carol.client.setRequestHandler('sampling/createMessage', (request) => {
      samplingRequests.push(request.params.systemPrompt ?? '');
      return samplingAnswer(request.params);
    });
    const dave = await harness.connect();
    await carol.client.callTool({ name: 'propose_candidate', arguments: { server: 'echo', tool: 'echo', description: GOOD_CANDIDATE } });
    await carol.client.callTool({ name: 'save_golden_prompts', arguments: { server: 'echo', tool: 'echo', prompts: GOLDEN_PROMPTS } });
    const result = await carol.client.callTool({ name: 'run_evaluation', arguments: { server: 'echo', tool: 'echo' } });
    expect(JSON.parse(textOf(result))).toMatchObject({ backend: 'sampling', runs: 30, candidates: [{ metrics: { overall: 1 } }] });
    expect(samplingRequests).toHaveLength(30);
    const refused = await dave.client.callTool({ name: 'run_evaluation', arguments: { server: 'echo', tool: 'echo' } });
    expect(refused.isError).toBe(true);
    expect(textOf(refused)).toMatch(/^No model backend is configured/);
  });
});
