// The purpose on a compact line: boilerplate real servers put in descriptions is stripped.
import { describe, expect, it } from 'vitest';
import { toolPurpose } from './toolPurpose.js';

describe('a tool purpose', () => {
  it('is the first sentence, as before, for a plain description', () => {
    expect(toolPurpose('Read a file from disk. Second sentence.')).toBe('Read a file from disk.');
  });

  it('leaves out Args:, Returns: and error-response blocks', () => {
    expect(toolPurpose('Create an issue\n\nArgs:\n  title: the title\nReturns:\n  the issue')).toBe('Create an issue');
    expect(toolPurpose('Delete a branch\nError Responses:\n- 404: not found\n- 409: protected')).toBe('Delete a branch');
  });

  it('strips markdown: emphasis, code marks, links and headings', () => {
    expect(toolPurpose('## Search\n**Find** `files` matching a [glob](https://example.com/glob) pattern.')).toBe('Search.');
    expect(toolPurpose('**Find** `files` matching a [glob](https://example.com/glob) pattern. More.')).toBe(
      'Find files matching a glob pattern.',
    );
  });

  it('skips a leading warning paragraph and "This tool …" framing', () => {
    expect(
      toolPurpose(
        '\n    ⚠️ **MANDATORY: The handler will REJECT any call that does not include BOTH outputDir.**\n\n    This tool downloads usage data as CSV. Then more.',
      ),
    ).toBe('Downloads usage data as CSV.');
    expect(
      toolPurpose('\n  This tool is used to rerun a workflow from start or from the failed job.\n\n  Common use cases:\n  - Rerun'),
    ).toBe('Rerun a workflow from start or from the failed job.');
  });
});
