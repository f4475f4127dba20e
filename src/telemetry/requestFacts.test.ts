import { describe, expect, it } from 'vitest';
import { answerFacts } from './requestFacts.js';

describe('answerFacts', () => {
  it("keeps a failed answer's code and never its message, which may quote the arguments", () => {
    const facts = answerFacts({
      jsonrpc: '2.0',
      id: 1,
      error: { code: -32602, message: "path '/home/ann/tax-2026.pdf' is outside the roots" },
    });
    expect(facts).toMatchObject({ errorType: '-32602', statusCode: '-32602' });
    expect(JSON.stringify(facts)).not.toContain('tax-2026');
  });

  it('names a tool error tool_error, and a plain result no failure', () => {
    expect(answerFacts({ jsonrpc: '2.0', id: 1, result: { content: [], isError: true } })?.errorType).toBe('tool_error');
    expect(answerFacts({ jsonrpc: '2.0', id: 1, result: { content: [] } })).toBeUndefined();
  });
});
