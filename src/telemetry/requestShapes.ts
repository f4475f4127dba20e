// What every request of one method and target on one wire has in common, worked out once and
// reused: its span's name and start attributes, and the attribute sets its duration is recorded
// under. A forwarded call then builds no attribute object and no string of its own, and the
// metrics SDK is handed the same few objects again and again.
import type { Attributes } from '@opentelemetry/api';
import { isKnownProtocolVersion } from '../shared/index.js';
import { ATTR } from './names.js';

export type Meta = Record<string, unknown>;

/** How a request failed: error.type, the JSON-RPC code when there is one, and the span status's message. */
export interface Failure {
  readonly errorType: string;
  readonly statusCode?: string;
  readonly message: string;
}

/** A request's span name and attributes, and its metric attributes by outcome. */
export interface RequestShape {
  readonly name: string;
  /** The span's attributes at its start (what a sampler sees); the request and session ids are added after. */
  readonly attributes: Attributes;
  /** Its operation metric's attributes: the span's, the tool's name only if it exists, never an id. */
  readonly measured: Attributes;
  /** The metric attributes when it failed so. */
  failed(failure: Failure): Attributes;
  /** The tool or prompt it names, when that name labels its metrics (undefined: none, or `_OTHER` already). */
  readonly labelled?: { readonly kind: 'tool' | 'prompt'; readonly name: string };
  /** The same request measured under `_OTHER`: for one naming what the caller's policy hides. */
  concealed(): RequestShape;
}

/** The metric label of a tool or prompt name a client gave that names none loadout has (a client may invent any). */
export const OTHER_TOOL = '_OTHER';

/** Which names a client sends may label a metric: those of tools and prompts loadout has. */
export interface KnownNames {
  tool(name: string): boolean;
  prompt(name: string): boolean;
}

/**
 * The `mcp.protocol.version` a request is labelled with: the version it names when loadout speaks
 * it, else OTHER_TOOL's `_OTHER`. A client may send any string, and each label is a metric series
 * and a set of shapes kept for good.
 */
export function protocolVersionLabel(version: string): string {
  return isKnownProtocolVersion(version) ? version : OTHER_TOOL;
}
// Bounds on what is cached: beyond them a shape is built for its one request (still correct, only slower).
const MAX_TARGETS_PER_METHOD = 2048;
const MAX_FAILURES_PER_SHAPE = 32;

/** The shapes of the requests on one wire (its transport, protocol version, server). */
export class RequestShapes {
  readonly #base: Attributes;
  readonly #known: KnownNames;
  readonly #untargeted = new Map<string, RequestShape>();
  readonly #targeted = new Map<string, Map<string, RequestShape>>();

  /** `base`: the wire's attributes; `known`: which tool and prompt names may label a metric. */
  constructor(base: Attributes, known: KnownNames) {
    this.#base = base;
    this.#known = known;
  }

  /** The shape of a `method` request with these params. */
  of(method: string, params: Meta | undefined): RequestShape {
    const target = method === 'tools/call' || method === 'prompts/get' ? params?.name : undefined;
    if (typeof target !== 'string') {
      let shape = this.#untargeted.get(method);
      if (!shape) this.#untargeted.set(method, (shape = this.#build(method, undefined)));
      return shape;
    }
    let targets = this.#targeted.get(method);
    if (!targets) this.#targeted.set(method, (targets = new Map<string, RequestShape>()));
    const cached = targets.get(target);
    if (cached) return cached;
    const shape = this.#build(method, target);
    // A name that names nothing is the client's to invent: never kept.
    const invented = shape.measured[ATTR.toolName] === OTHER_TOOL || shape.measured[ATTR.promptName] === OTHER_TOOL;
    if (!invented && targets.size < MAX_TARGETS_PER_METHOD) targets.set(target, shape);
    return shape;
  }

  // `known: false`: measured under `_OTHER` whatever the name (a concealed shape).
  #build(method: string, target: string | undefined, known?: false): RequestShape {
    const attributes: Attributes = { ...this.#base, [ATTR.methodName]: method };
    const measured: Attributes = { ...attributes };
    let labelled: RequestShape['labelled'];
    if (method === 'tools/call') {
      attributes[ATTR.operationName] = measured[ATTR.operationName] = 'execute_tool';
      if (target !== undefined) {
        attributes[ATTR.toolName] = target;
        if (known !== false && this.#known.tool(target)) labelled = { kind: 'tool', name: target };
        measured[ATTR.toolName] = labelled ? target : OTHER_TOOL;
      }
    } else if (method === 'prompts/get' && target !== undefined) {
      attributes[ATTR.promptName] = target;
      if (known !== false && this.#known.prompt(target)) labelled = { kind: 'prompt', name: target };
      measured[ATTR.promptName] = labelled ? target : OTHER_TOOL;
    }
    const failures = new Map<string, Attributes>();
    let concealed: RequestShape | undefined;
    const shape: RequestShape = {
      name: target === undefined ? method : `${method} ${target}`,
      attributes: Object.freeze(attributes),
      measured: Object.freeze(measured),
      ...(labelled && { labelled }),
      concealed: () => (labelled ? (concealed ??= this.#build(method, target, false)) : shape),
      failed({ errorType, statusCode }) {
        const cached = failures.get(errorType);
        if (cached) return cached;
        const failed = Object.freeze({
          ...measured,
          [ATTR.errorType]: errorType,
          ...(statusCode !== undefined && { [ATTR.statusCode]: statusCode }),
        });
        if (failures.size < MAX_FAILURES_PER_SHAPE) failures.set(errorType, failed);
        return failed;
      },
    };
    return shape;
  }
}
