// SEP-2243's x-mcp-header rules: which annotations are valid (the conformance suite's invalid
// tools among them), how an argument is written as a header, and how a received header is checked.
import { describe, expect, it } from 'vitest';
import { paramHeaderMismatch, paramHeadersOf, scanParamHeaders, type ParamHeader } from './paramHeaders.js';

const annotated = (property: Record<string, unknown>) => ({ type: 'object', properties: { value: property } });

describe('scanParamHeaders', () => {
  it('finds annotations at any depth of properties', () => {
    const scan = scanParamHeaders({
      type: 'object',
      properties: {
        region: { type: 'string', 'x-mcp-header': 'Region' },
        where: { type: 'object', properties: { zone: { type: 'integer', 'x-mcp-header': 'Zone' } } },
      },
    });
    expect(scan).toEqual({
      valid: true,
      headers: expect.arrayContaining([
        { path: ['region'], name: 'Region', type: 'string' },
        { path: ['where', 'zone'], name: 'Zone', type: 'integer' },
      ]),
    });
    expect(scanParamHeaders({ type: 'object' })).toEqual({ valid: true, headers: [] });
  });

  it.each([
    ['empty', annotated({ type: 'string', 'x-mcp-header': '' })],
    ['on an object', annotated({ type: 'object', 'x-mcp-header': 'Data' })],
    ['on an array', annotated({ type: 'array', items: { type: 'string' }, 'x-mcp-header': 'Items' })],
    ['on null', annotated({ type: 'null', 'x-mcp-header': 'Nil' })],
    ['on a number', annotated({ type: 'number', 'x-mcp-header': 'Score' })],
    ['with a space', annotated({ type: 'string', 'x-mcp-header': 'My Region' })],
    ['with a colon', annotated({ type: 'string', 'x-mcp-header': 'Region:Primary' })],
    ['not ASCII', annotated({ type: 'string', 'x-mcp-header': 'Région' })],
    ['with a control character', annotated({ type: 'string', 'x-mcp-header': 'Region\t1' })],
    ['under items', annotated({ type: 'array', items: { type: 'string', 'x-mcp-header': 'Item' } })],
    ['under anyOf', annotated({ anyOf: [{ type: 'string', 'x-mcp-header': 'Either' }] })],
    ['on the schema itself', { type: 'object', 'x-mcp-header': 'Root' }],
  ])('refuses an annotation %s', (_case, schema) => {
    expect(scanParamHeaders(schema).valid).toBe(false);
  });

  it('refuses the same name twice, in any case', () => {
    const scan = scanParamHeaders({
      type: 'object',
      properties: { a: { type: 'string', 'x-mcp-header': 'MyField' }, b: { type: 'string', 'x-mcp-header': 'myfield' } },
    });
    expect(scan).toMatchObject({ valid: false, reason: expect.stringMatching(/declared twice/) });
  });
});

describe('paramHeadersOf and paramHeaderMismatch', () => {
  const headers: ParamHeader[] = [
    { path: ['region'], name: 'Region', type: 'string' },
    { path: ['count'], name: 'Count', type: 'integer' },
    { path: ['dry'], name: 'Dry', type: 'boolean' },
  ];
  const check = (args: unknown, sent: Record<string, string>) =>
    paramHeaderMismatch(headers, args, (name) => Object.entries(sent).find(([key]) => key.toLowerCase() === name)?.[1]);

  it('writes plain ASCII as it is and the rest as Base64 of UTF-8, and none for an absent or null value', () => {
    expect(paramHeadersOf(headers, { region: 'eu-west', count: 42, dry: false })).toEqual({
      'Mcp-Param-Region': 'eu-west',
      'Mcp-Param-Count': '42',
      'Mcp-Param-Dry': 'false',
    });
    const b64 = (text: string) => `=?base64?${Buffer.from(text).toString('base64')}?=`;
    expect(paramHeadersOf(headers, { region: 'zürich' })).toEqual({ 'Mcp-Param-Region': b64('zürich') });
    expect(paramHeadersOf(headers, { region: ' padded ' })).toEqual({ 'Mcp-Param-Region': b64(' padded ') });
    // A plain value that looks like the sentinel is encoded too, so it reads back as itself.
    expect(paramHeadersOf(headers, { region: '=?base64?SGk=?=' })).toEqual({ 'Mcp-Param-Region': b64('=?base64?SGk=?=') });
    expect(paramHeadersOf(headers, { region: null })).toEqual({});
    expect(paramHeadersOf(headers, undefined)).toEqual({});
  });

  it('agrees with what paramHeadersOf writes', () => {
    for (const args of [{ region: 'zürich', count: 7, dry: true }, { region: '=?base64?x?=' }, {}])
      expect(check(args, paramHeadersOf(headers, args))).toBeUndefined();
  });

  it('refuses a missing, different or badly encoded header, and compares integers as numbers', () => {
    expect(check({ region: 'eu' }, {})).toMatch(/Mcp-Param-Region header is missing/);
    expect(check({ region: 'eu' }, { 'Mcp-Param-Region': 'us' })).toMatch(/says "us"/);
    expect(check({ region: 'Hello' }, { 'Mcp-Param-Region': '=?base64?SGVsbG8?=' })).toMatch(/not valid Base64/);
    expect(check({ region: 'Hello' }, { 'Mcp-Param-Region': '=?base64?SGVs!!!bG8=?=' })).toMatch(/not valid Base64/);
    // Without the whole sentinel a value is literal.
    expect(check({ region: '=?base64?SGVsbG8=' }, { 'Mcp-Param-Region': '=?base64?SGVsbG8=' })).toBeUndefined();
    expect(check({ count: 42 }, { 'Mcp-Param-Count': '42.0' })).toBeUndefined();
    expect(check({ count: 42 }, { 'Mcp-Param-Count': '43' })).toMatch(/Mcp-Param-Count/);
    expect(check({ region: 'eu' }, { 'Mcp-Param-Region': '  eu  ' })).toBeUndefined();
  });
});
