import { describe, expect, it } from 'vitest';
import { checkServerFix, listFailureWords } from './listFailures.js';

const UNSERVED = 'none in loadout: the server declares a list it does not serve (report it to its authors)';

describe('listFailureWords', () => {
  it('tells an unimplemented list by its JSON-RPC code, whatever its words say', () => {
    const words = listFailureWords('db', {
      resourceTemplates: { text: 'resources/templates/list failed: no such method', rpcCode: -32601 },
      // The server's own words name another code; its answer's code is what counts.
      prompts: { text: 'prompts/list failed: upstream said -32601 (-32603)', rpcCode: -32603 },
    });
    expect(words).toEqual([
      { message: 'resources/templates/list failed: no such method; its tools work, its resource templates are not offered', fix: UNSERVED },
      {
        message: 'prompts/list failed: upstream said -32601 (-32603); its tools work, its prompts are not offered',
        fix: checkServerFix('db'),
      },
    ]);
  });

  it('asks to check the server when a list failed without a JSON-RPC answer', () => {
    expect(listFailureWords('db', { resources: { text: 'resources/list failed: Request timed out' } })).toEqual([
      { message: 'resources/list failed: Request timed out; its tools work, its resources are not offered', fix: checkServerFix('db') },
    ]);
  });
});
