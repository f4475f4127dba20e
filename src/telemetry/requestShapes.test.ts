import { describe, expect, it } from 'vitest';
import { OTHER_TOOL, RequestShapes, protocolVersionLabel } from './requestShapes.js';

describe('RequestShapes', () => {
  const shapes = () =>
    new RequestShapes({ 'network.transport': 'pipe' }, { tool: (name) => name === 'echo_echo', prompt: (name) => name === 'echo_greet' });

  it('works out a tool call once, and hands back the same attribute objects each time', () => {
    const wire = shapes();
    const first = wire.of('tools/call', { name: 'echo_echo' });
    expect(wire.of('tools/call', { name: 'echo_echo', arguments: { text: 'x' } })).toBe(first);
    expect(first.name).toBe('tools/call echo_echo');
    expect(first.measured).toEqual({
      'network.transport': 'pipe',
      'mcp.method.name': 'tools/call',
      'gen_ai.operation.name': 'execute_tool',
      'gen_ai.tool.name': 'echo_echo',
    });
    const failure = { errorType: 'tool_error', message: 'tool_error' };
    expect(first.failed(failure)).toBe(first.failed(failure));
    expect(first.failed(failure)['error.type']).toBe('tool_error');
  });

  it('keeps a made-up tool name on the span only, labels its metric _OTHER, and keeps nothing of it', () => {
    const wire = shapes();
    const invented = wire.of('tools/call', { name: 'made_up' });
    expect(invented.attributes['gen_ai.tool.name']).toBe('made_up');
    expect(invented.measured['gen_ai.tool.name']).toBe(OTHER_TOOL);
    expect(wire.of('tools/call', { name: 'made_up' })).not.toBe(invented);
  });

  it('labels a prompt by its name only when loadout has it: a made-up prompt name is _OTHER on the metric and kept nowhere', () => {
    const wire = shapes();
    const known = wire.of('prompts/get', { name: 'echo_greet' });
    expect(known.name).toBe('prompts/get echo_greet');
    expect(known.measured['gen_ai.prompt.name']).toBe('echo_greet');
    expect(wire.of('prompts/get', { name: 'echo_greet' })).toBe(known);
    const invented = wire.of('prompts/get', { name: 'made_up' });
    expect(invented.attributes['gen_ai.prompt.name']).toBe('made_up');
    expect(invented.measured['gen_ai.prompt.name']).toBe(OTHER_TOOL);
    expect(wire.of('prompts/get', { name: 'made_up' })).not.toBe(invented);
  });
});

describe('protocolVersionLabel', () => {
  it('labels a revision loadout speaks by its name, and any other string a client sends as _OTHER', () => {
    expect(protocolVersionLabel('2026-07-28')).toBe('2026-07-28');
    expect(protocolVersionLabel('2025-06-18')).toBe('2025-06-18');
    expect(protocolVersionLabel('2099-01-01')).toBe(OTHER_TOOL);
    expect(protocolVersionLabel(`x${'y'.repeat(500)}`)).toBe(OTHER_TOOL);
  });
});
