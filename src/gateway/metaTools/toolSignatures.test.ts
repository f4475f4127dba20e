// The TypeScript types written for run-code's callTool signatures, from the JSON Schemas real servers send.
import { describe, expect, it } from 'vitest';
import { typeOf } from './toolSignatures.js';

describe('typeOf', () => {
  it('writes objects with optional members, arrays, enums, unions and records', () => {
    const schema = {
      type: 'object',
      properties: {
        path: { type: 'string' },
        head: { type: 'integer' },
        'dash-key': { type: 'boolean' },
        tags: { type: 'array', items: { anyOf: [{ type: 'string' }, { type: 'number' }] } },
        mode: { enum: ['read', 'write'] },
        kind: { const: 'file' },
        extra: { type: 'object', additionalProperties: { type: 'number' } },
        nullable: { type: ['string', 'null'] },
      },
      required: ['path', 'mode'],
    };
    expect(typeOf(schema, 0)).toBe(
      '{ path: string; head?: number; "dash-key"?: boolean; tags?: (string | number)[]; mode: "read" | "write"; kind?: "file"; extra?: Record<string, number>; nullable?: string | null }',
    );
  });

  it('says unknown for what it cannot write in a line: $ref, no type, nesting past four levels', () => {
    expect(typeOf({ $ref: '#/definitions/x' }, 0)).toBe('unknown');
    expect(typeOf({}, 0)).toBe('unknown');
    expect(typeOf(true, 0)).toBe('unknown');
    const deep = {
      type: 'array',
      items: { type: 'array', items: { type: 'array', items: { type: 'array', items: { type: 'array', items: { type: 'string' } } } } },
    };
    expect(typeOf(deep, 0)).toBe('unknown[][][][][]');
  });
});
