// Prompts, resources and completions of a downstream server reached over streamable HTTP
// (server-everything in streamableHttp mode), through loadout over stdio.
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { makeTempDirs, startGateway, writeServersYaml, type GatewayProcess, type TempDirs } from '../helpers/gateway.js';
import { startEverythingHttp, type ListeningProcess } from '../helpers/http.js';

describe('prompts and resources of a streamable HTTP downstream', () => {
  let dirs: TempDirs;
  let everything: ListeningProcess;
  let gateway: GatewayProcess;

  beforeAll(async () => {
    dirs = await makeTempDirs();
    everything = await startEverythingHttp();
    await writeServersYaml(dirs.configDir, { remote: { type: 'http', url: everything.url } });
    gateway = await startGateway({ dirs, args: ['--equip', 'all'] });
  });
  afterAll(async () => {
    await gateway?.close();
    await everything?.close('SIGKILL');
    await dirs.cleanup();
  });

  it('lists, gets, reads and completes through the HTTP connection', async () => {
    const prompts = (await gateway.client.listPrompts()).prompts.map((prompt) => prompt.name);
    expect(prompts).toEqual(expect.arrayContaining(['remote_simple-prompt', 'remote_args-prompt']));
    const got = await gateway.client.getPrompt({ name: 'remote_args-prompt', arguments: { city: 'Oslo' } });
    expect(JSON.stringify(got.messages)).toContain('Oslo');
    const { resources } = await gateway.client.listResources();
    expect(resources.map((resource) => resource.uri)).toContain('demo://resource/static/document/architecture.md');
    const read = await gateway.client.readResource({ uri: 'demo://resource/dynamic/blob/2' });
    expect(read.contents[0]).toMatchObject({ uri: 'demo://resource/dynamic/blob/2' });
    expect(typeof (read.contents[0] as { blob?: unknown }).blob).toBe('string');
    const completion = await gateway.client.complete({ ref: { type: 'ref/prompt', name: 'remote_completable-prompt' }, argument: { name: 'department', value: 'E' } });
    expect(completion.completion.values).toContain('Engineering');
  });
});
