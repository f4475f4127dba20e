// Canonical JSON as RFC 8785 writes it, without recursion.
import { describe, expect, it } from 'vitest';
import { canonicalJson } from './canonicalJson.js';

describe('canonicalJson', () => {
  it("writes RFC 8785's own example as the RFC does", () => {
    const input = JSON.parse(
      String.raw`{"numbers":[333333333.33333329,1E30,4.50,2e-3,0.000000000000000000000000001],"string":"\u20ac$\u000F\u000aA'\u0042\u0022\u005c\\\"\/","literals":[null,true,false]}`,
    ) as unknown;
    expect(canonicalJson(input)).toBe(
      String.raw`{"literals":[null,true,false],"numbers":[333333333.3333333,1e+30,4.5,0.002,1e-27],"string":"€$\u000f\nA'B\"\\\\\"/"}`,
    );
  });

  it('sorts keys by UTF-16 code units at every level, drops undefined members and writes undefined items as null', () => {
    expect(canonicalJson({ b: 1, a: [1, { d: undefined, c: 'x', é: 2, B: null }], '': [], z: {} })).toBe(
      '{"":[],"a":[1,{"B":null,"c":"x","é":2}],"b":1,"z":{}}',
    );
    expect(canonicalJson({ '\u20ac': 1, '\r': 2, '\ud83d\ude00': 5, '\ufb33': 6 })).toBe(
      '{"\\r":2,"\u20ac":1,"\ud83d\ude00":5,"\ufb33":6}',
    );
    expect(canonicalJson([undefined, -0])).toBe('[null,0]');
  });

  it('writes a value 1,000,000 levels deep', () => {
    const depth = 1_000_000;
    const text = `{"a":${'['.repeat(depth)}{"b":1,"a":2}${']'.repeat(depth)}}`;
    expect(canonicalJson(JSON.parse(text))).toBe(`{"a":${'['.repeat(depth)}{"a":2,"b":1}${']'.repeat(depth)}}`);
  });

  it('writes a value reached twice, and refuses a cycle', () => {
    const shared = { x: 1 };
    expect(canonicalJson({ a: shared, b: [shared] })).toBe('{"a":{"x":1},"b":[{"x":1}]}');
    const cycle: Record<string, unknown> = {};
    cycle.self = [cycle];
    expect(() => canonicalJson(cycle)).toThrow(TypeError);
  });
});
