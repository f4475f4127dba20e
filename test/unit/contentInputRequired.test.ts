// The content fixture's multi round-trip tools (test/fixtures/contentInputRequired.ts), called as
// the SDK calls them, round by round: the conformance suite blames loadout for whatever they get wrong.
import type { InputRequiredResult, ServerContext } from '@modelcontextprotocol/server';
import { describe, expect, it } from 'vitest';
import { callInputRequiredTool } from '../fixtures/contentInputRequired.js';

// The part of a request's context the tools read: the client's answers and the state it sent back.
function context(inputResponses?: Record<string, unknown>, requestState?: string): ServerContext {
  return { mcpReq: { inputResponses, requestState: () => requestState, envelope: {} } } as unknown as ServerContext;
}

const accepted = (content: Record<string, unknown>) => ({ action: 'accept', content });

describe('the content fixture, input_required_result_multi_round', () => {
  it.each(['Jane Doe', 'J. R. R. Doe'])('carries the first answer (%s) through its signed requestState', (name) => {
    const first = callInputRequiredTool('input_required_result_multi_round', context()) as InputRequiredResult;
    const second = callInputRequiredTool(
      'input_required_result_multi_round',
      context({ step1: accepted({ name }) }, first.requestState),
    ) as InputRequiredResult;
    expect(Object.keys(second.inputRequests ?? {})).toEqual(['step2']);
    const done = callInputRequiredTool(
      'input_required_result_multi_round',
      context({ step2: accepted({ color: 'blue' }) }, second.requestState),
    );
    expect(done).toEqual({ content: [{ type: 'text', text: `Done: ${name} likes blue` }] });
  });

  it('refuses a requestState changed on the way', () => {
    const first = callInputRequiredTool('input_required_result_multi_round', context()) as InputRequiredResult;
    expect(() =>
      callInputRequiredTool('input_required_result_multi_round', context({ step1: accepted({ name: 'x' }) }, `x${first.requestState}`)),
    ).toThrow('requestState failed its integrity check');
  });
});
