import { ProtocolError } from '@modelcontextprotocol/server';
import { describe, expect, it } from 'vitest';
import { auditedAnswer } from './callAudit.js';

describe('auditedAnswer', () => {
  const recorded = () => {
    const calls: Array<[string, string | undefined]> = [];
    return { calls, record: (outcome: string, detail?: string) => void calls.push([outcome, detail]) };
  };

  it('records a failed call by its code, never the words a server answered (they may quote the arguments)', async () => {
    const { calls, record } = recorded();
    const failure = new ProtocolError(-32603, "Server 'db' failed on query: syntax error near 'password=hunter2'");
    await expect(auditedAnswer(Promise.reject(failure), record)).rejects.toBe(failure);
    expect(calls).toEqual([['failed', 'code -32603']]);
    expect(JSON.stringify(calls)).not.toContain('hunter2');
  });

  it('records an isError result as error and a result as ok, and hands each on unchanged', async () => {
    const { calls, record } = recorded();
    const result = { content: [], isError: true };
    expect(await auditedAnswer(Promise.resolve(result), record)).toBe(result);
    expect(await auditedAnswer(Promise.resolve({ content: [] }), record)).toEqual({ content: [] });
    expect(calls).toEqual([
      ['error', undefined],
      ['ok', undefined],
    ]);
  });

  it('hands the answer itself on when there is no audit trail', () => {
    const answer = Promise.resolve({ content: [] });
    expect(auditedAnswer(answer, undefined)).toBe(answer);
  });
});
