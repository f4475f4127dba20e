// A forwarded tool result reaches the client exactly as the downstream server sent it, including
// content fields the SDK's schemas do not know (a newer server's additions).
import { describe, expect, it } from 'vitest';
import { eventually, fixture, nodeServer, useGatewaySandbox, writeServersYaml } from '../helpers/gateway.js';

describe('forwarded results', () => {
  const sandbox = useGatewaySandbox();

  it('keeps content fields unknown to the SDK, for equipped tools and through call-tool', async () => {
    await writeServersYaml(sandbox.dirs.configDir, { raw: nodeServer(fixture('rawResult')) });
    const gateway = await sandbox.start({ args: ['--equip', 'all'] });
    // The server is discovered after start; `all` picks its tool up when discovery lands.
    await eventually(
      async () => (await gateway.client.listTools()).tools.some((tool) => tool.name === 'raw_rich'),
      15_000,
      'raw_rich to be exposed',
    );
    const expected = [{ type: 'text', text: 'rich result', futureField: { kept: true } }];
    // The client's own CallToolResultSchema would strip the field again, so read the raw result.
    const { ResultSchema } = await import('@modelcontextprotocol/core');
    const equipped = await gateway.client.request({ method: 'tools/call', params: { name: 'raw_rich', arguments: {} } }, ResultSchema);
    expect(equipped.content).toEqual(expected);
    const viaMetaTool = await gateway.client.request(
      { method: 'tools/call', params: { name: 'call-tool', arguments: { tool: 'raw.rich' } } },
      ResultSchema,
    );
    expect(viaMetaTool.content).toEqual(expected);
  });
});
