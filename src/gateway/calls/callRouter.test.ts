// The router's decisions, with the gateway's services stood in by recorders: the pool records what
// is forwarded (and answers at once), the catalog holds two tools, one of which changed upstream,
// and search learning records what it is credited with.
import type { CallToolResult, Server } from '@modelcontextprotocol/server';
import { describe, expect, it } from 'vitest';
import type { Route } from '../../registry/index.js';
import { Cancellation } from '../../shared/index.js';
import { CallRouter, type RoutedSession } from './callRouter.js';
import type { GatewayContext } from '../context.js';
import { OpenApps } from '../openApps.js';
import type { ClientRequest, RequestExtra } from './forward.js';
import { READS_ONLY, SAVES, defineMetaTool, type MetaTool } from '../metaTools/metaTool.js';
import * as z from 'zod';
import type { AuditEvent } from '../../audit/index.js';
import { LimitsSettingsSchema } from '../../config/index.js';
import { CallLimits, LOCAL_PRINCIPAL } from '../../identity/index.js';
import { RATE_LIMITED_CODE } from './callAudit.js';
import { TELEMETRY_OFF } from '../../telemetry/index.js';

const ECHO: Route = { server: 'srv', tool: 'echo', id: 'srv.echo' };
const CHANGED: Route = { server: 'srv', tool: 'changed', id: 'srv.changed' };

interface Forwarded {
  server: string;
  method: string;
  params: Record<string, unknown> | undefined;
}

// A catalog tool's definition, as discovery keeps it (call-tool's route reads its annotations).
const NO_ARGS = { inputSchema: { type: 'object' } };

function setup(options: { blockChanged?: boolean; metaTools?: MetaTool[]; limits?: unknown } = {}) {
  const forwarded: Forwarded[] = [];
  const audited: AuditEvent[] = [];
  const credited: string[][] = [];
  const catalogTools = catalogOf([
    [ECHO.id, { id: ECHO.id, server: ECHO.server, name: ECHO.tool, enabled: true, blocked: false, definition: NO_ARGS }],
    [CHANGED.id, { id: CHANGED.id, server: CHANGED.server, name: CHANGED.tool, enabled: false, blocked: true, definition: NO_ARGS }],
    ['srv.other', { id: 'srv.other', server: 'srv', name: 'other', enabled: true, blocked: false, definition: NO_ARGS }],
  ] as const);
  const tasksAdded: Array<{ owner: object; taskId: string }> = [];
  // Every take of the limits, as (principal, server): in the store each is a statement.
  const takes: Array<[string, string | undefined]> = [];
  const limits = new CallLimits(LimitsSettingsSchema.parse(options.limits ?? {}));
  const context = {
    principal: LOCAL_PRINCIPAL,
    hiddenByPolicy: (name: string) => name === 'srv_secret',
    audit: { enabled: true, record: (event: AuditEvent) => void audited.push(event) },
    limits: {
      get enabled() {
        return limits.enabled;
      },
      take: (principal: string, server?: string, counted?: { counted?: boolean }) => {
        takes.push([principal, server]);
        return limits.take(principal, server, counted);
      },
      peek: (principal: string, server?: string) => limits.peek(principal, server),
    },
    settings: { block_changed_tools: options.blockChanged ?? false },
    logger: { error: () => undefined, warn: () => undefined, debug: () => undefined },
    naming: { maxNameLength: 64, reservedNames: new Set<string>() },
    ready: () => Promise.resolve(),
    discovery: { state: () => undefined, retryAuthorized: () => Promise.resolve() },
    pool: {
      config: () => undefined,
      request: (server: string, method: string, params: Record<string, unknown> | undefined) => {
        forwarded.push({ server, method, params });
        const task = (params as { task?: unknown }).task;
        return Promise.resolve(
          task ? { task: { taskId: 'downstream-1', status: 'working' } } : { content: [{ type: 'text', text: 'ok' }] },
        );
      },
    },
    catalog: {
      current: catalogTools,
      brokenServerProblem: () => undefined,
      confirmBeforeCall: () => Promise.resolve(),
      learning: {
        expects: (_searcher: object, id: string) => id === ECHO.id,
        used: (_searcher: object, ids: readonly string[]) => {
          credited.push([...ids]);
          return Promise.resolve();
        },
      },
    },
    tasks: {
      add: (owner: object, target: { taskId: string }) => {
        tasksAdded.push({ owner, taskId: target.taskId });
        return 'loadout-1';
      },
    },
    telemetry: TELEMETRY_OFF,
  } as unknown as GatewayContext;
  const routes = new Map([
    ['srv_echo', ECHO],
    ['srv_changed', CHANGED],
  ]);
  const snapshot = { routes };
  const session = {
    server: CLIENT_SERVER,
    member: { servers: () => [], send: () => undefined },
    openApps: new OpenApps(),
    searcher: {},
    snapshot,
    settledSnapshot: () => Promise.resolve(snapshot),
    equip: () => Promise.reject(new Error('not here')),
    unequip: () => Promise.reject(new Error('not here')),
    callAnyTool: (tool: string, args: Record<string, unknown> | undefined, extra: RequestExtra) => router.callAny(tool, args, extra),
  } as unknown as RoutedSession;
  const metaTools = new Map((options.metaTools ?? []).map((tool) => [tool.name, tool]));
  const router: CallRouter = new CallRouter({ context, metaTools, session, clientName: () => undefined });
  return { router, forwarded, credited, tasksAdded, session, audited, takes };
}

interface StandInTool {
  id: string;
  server: string;
  name: string;
  enabled: boolean;
  blocked: boolean;
  /** The server's definition: none of these is an App's. */
  definition: { inputSchema: Record<string, unknown> };
}

// The part of a Catalog the router reads: tools by id, the visible and all lists, suggestions.
function catalogOf(entries: ReadonlyArray<readonly [string, StandInTool]>) {
  const tools = new Map(entries);
  return Object.assign(tools, {
    all: () => [...tools.values()],
    visible: () => [...tools.values()].filter((tool) => tool.enabled),
    suggest: () => [],
  });
}

const CLIENT_SERVER = { getClientCapabilities: () => undefined } as unknown as Server;

function request(id = 1): ClientRequest {
  return {
    requestId: id,
    cancellation: new Cancellation(),
    sendNotification: () => Promise.resolve(),
    server: CLIENT_SERVER,
    modern: undefined,
  };
}

function extra(id = 1): RequestExtra {
  return { mcpReq: { id, signal: new AbortController().signal, notify: () => Promise.resolve() } } as unknown as RequestExtra;
}

function textOf(result: CallToolResult): string {
  return result.content.map((part) => (part.type === 'text' ? part.text : '')).join('');
}

// A state-changing meta-tool recorded as an equip.
const EQUIP = defineMetaTool({
  name: 'equip-toolset',
  description: 'd',
  input: z.object({}),
  example: {},
  annotations: SAVES,
  changesState: true,
  run: () => Promise.resolve('equipped'),
});

// call-tool as the gateway serves it: a call of any catalog tool, through the session.
const CALL_ANY = defineMetaTool({
  name: 'call-tool',
  description: 'd',
  input: z.object({ tool: z.string(), arguments: z.record(z.string(), z.unknown()).optional() }),
  example: { tool: 'srv.other' },
  annotations: READS_ONLY,
  run: (args, { session, extra }) => session.callAnyTool(args.tool, args.arguments, extra),
});

describe('CallRouter', () => {
  it('decides a meta-tool before a route of the same name, a route by its exposed name, and refuses the rest', () => {
    const meta = defineMetaTool({
      name: 'srv_echo',
      description: 'd',
      input: z.object({}),
      example: {},
      annotations: READS_ONLY,
      run: () => Promise.resolve('meta'),
    });
    const { router } = setup({ metaTools: [meta] });
    const routes = new Map([
      ['srv_echo', ECHO],
      ['srv_changed', CHANGED],
    ]);
    expect(router.decide('srv_echo', routes)).toEqual({ kind: 'meta-tool', tool: meta });
    expect(router.decide('srv_changed', routes)).toEqual({ kind: 'forward', route: CHANGED });
    expect(router.decide('nope', routes)).toEqual({ kind: 'refuse' });
  });

  it('answers from the intake only a call of an equipped tool, credits it, and forwards it as the downstream names it', async () => {
    const { router, forwarded, credited } = setup();
    expect(router.direct('tools/list', {})).toBeUndefined();
    expect(router.direct('tools/call', { name: 'nope' })).toBeUndefined();
    const answer = router.direct('tools/call', { name: 'srv_echo', arguments: { text: 'hi' } });
    expect(answer).toBeDefined();
    expect(credited).toEqual([[ECHO.id]]);
    expect(await answer!(request())).toEqual({ content: [{ type: 'text', text: 'ok' }] });
    expect(forwarded).toEqual([{ server: 'srv', method: 'tools/call', params: { name: 'echo', arguments: { text: 'hi' } } }]);
  });

  it('leaves calls to the Server while a state-changing meta-tool is pending, and runs them after it', async () => {
    const order: string[] = [];
    let finish!: () => void;
    const finished = new Promise<void>((resolve) => (finish = resolve));
    const equip = defineMetaTool({
      name: 'equip',
      description: 'd',
      input: z.object({}),
      example: {},
      annotations: SAVES,
      changesState: true,
      run: async () => {
        await finished;
        order.push('equip');
        return 'equipped';
      },
    });
    const { router, forwarded } = setup({ metaTools: [equip] });
    const equipping = router.call({ name: 'equip' }, extra(1));
    expect(router.direct('tools/call', { name: 'srv_echo' })).toBeUndefined();
    const calling = router.call({ name: 'srv_echo' }, extra(2)).then((result) => {
      order.push('call');
      return result;
    });
    await Promise.resolve();
    expect(forwarded).toEqual([]);
    finish();
    expect(textOf(await equipping)).toBe('equipped');
    expect(textOf(await calling)).toBe('ok');
    expect(order).toEqual(['equip', 'call']);
    expect(router.direct('tools/call', { name: 'srv_echo' })).toBeDefined();
  });

  it('refuses a tool that changed upstream when changed tools are blocked, on every way in, plain or as a task', async () => {
    const { router, forwarded } = setup({ blockChanged: true });
    const direct = await router.direct('tools/call', { name: 'srv_changed' })!(request());
    const task = await router.direct('tools/call', { name: 'srv_changed', task: {} })!(request());
    const handled = await router.call({ name: 'srv_changed', task: {} }, extra());
    const any = await router.callAny('srv_changed', {}, extra());
    for (const result of [direct, task, handled, any]) expect(result).toMatchObject({ isError: true });
    expect(forwarded).toEqual([]);
    // An unchanged tool still goes.
    expect(textOf(await router.call({ name: 'srv_echo' }, extra()))).toBe('ok');
    expect(forwarded).toHaveLength(1);
  });

  it("forwards a task-augmented call with the task, and files the task under the session's hub identity", async () => {
    const { router, forwarded, tasksAdded, session } = setup();
    const result = await router.call({ name: 'srv_echo', arguments: {}, task: { ttl: 1000 } }, extra());
    expect(forwarded[0]).toMatchObject({ server: 'srv', params: { name: 'echo', task: { ttl: 1000 } } });
    expect(result).toMatchObject({ task: { taskId: 'loadout-1' } });
    expect(tasksAdded).toEqual([{ owner: session.member, taskId: 'downstream-1' }]);
  });

  it('calls a catalog tool outside the equipped set through call-tool, crediting its search whatever it showed', async () => {
    const { router, forwarded, credited } = setup();
    expect(textOf(await router.callAny('srv.other', { a: 1 }, extra()))).toBe('ok');
    expect(forwarded).toEqual([{ server: 'srv', method: 'tools/call', params: { name: 'other', arguments: { a: 1 } } }]);
    expect(credited).toEqual([['srv.other']]);
    // Outside the equipped set, a changed tool is not callable at all.
    await expect(router.callAny('srv.changed', {}, extra())).rejects.toMatchObject({ code: 'TOOL_DISABLED' });
  });

  it('answers an unrouted optimization tool with how to turn those tools on', async () => {
    const { router } = setup();
    const result = await router.call({ name: 'get_canonical_tools' }, extra());
    expect(result.isError).toBe(true);
    expect(textOf(result)).toContain('optimization.expose_tools: true');
  });

  it('records each call once answered: a forwarded one by its server and tool, a meta-tool as what it does, call-tool as its call', async () => {
    const callTool = defineMetaTool({
      name: 'call-tool',
      description: 'd',
      input: z.object({ tool: z.string(), arguments: z.record(z.string(), z.unknown()).optional() }),
      example: {},
      annotations: READS_ONLY,
      run: (args, { session, extra: callExtra }) => session.callAnyTool(args.tool, args.arguments, callExtra),
    });
    const { router, audited } = setup({ metaTools: [EQUIP, callTool] });
    const answer = router.direct('tools/call', { name: 'srv_echo', arguments: { text: 'hi' } })!(request(1));
    // Recorded after the answer, not before it.
    expect(audited).toEqual([]);
    await answer;
    await router.call({ name: 'equip-toolset', arguments: {} }, extra(2));
    await router.call({ name: 'call-tool', arguments: { tool: 'srv.other', arguments: { a: 1 } } }, extra(3));
    await router.call({ name: 'call-tool', arguments: { tool: 'srv.nothing' } }, extra(4));
    await router.call({ name: 'srv_secret', arguments: {} }, extra(5));
    await Promise.resolve();
    expect(
      audited.map(({ action, server, tool, exposedTool, outcome, requestId, arguments: args }) => ({
        action,
        server,
        tool,
        exposedTool,
        outcome,
        requestId,
        args,
      })),
    ).toEqual([
      { action: 'tool-call', server: 'srv', tool: 'echo', exposedTool: 'srv_echo', outcome: 'ok', requestId: 1, args: { text: 'hi' } },
      { action: 'equip', server: undefined, tool: 'equip-toolset', exposedTool: 'equip-toolset', outcome: 'ok', requestId: 2, args: {} },
      { action: 'tool-call', server: 'srv', tool: 'other', exposedTool: 'srv.other', outcome: 'ok', requestId: 3, args: { a: 1 } },
      // A name that routes nowhere (unknown, or hidden by the policy) has no tool of its own: only the name it was called by.
      {
        action: 'tool-call',
        server: undefined,
        tool: undefined,
        exposedTool: 'srv.nothing',
        outcome: 'error',
        requestId: 4,
        args: undefined,
      },
      {
        action: 'tool-call',
        server: undefined,
        tool: undefined,
        exposedTool: 'srv_secret',
        outcome: 'denied-policy',
        requestId: 5,
        args: {},
      },
    ]);
    for (const event of audited) expect(event).toMatchObject({ principal: LOCAL_PRINCIPAL, method: 'tools/call', hasArguments: true });
  });

  it('refuses a call over a rate limit on every way in with a JSON-RPC error that says when to retry, and forwards nothing', async () => {
    const { router, forwarded, audited } = setup({ limits: { calls_per_minute: 10, server_calls_per_minute: 1 } });
    await router.direct('tools/call', { name: 'srv_echo' })!(request());
    const refusals = [
      router.direct('tools/call', { name: 'srv_echo' })!(request()),
      router.call({ name: 'srv_echo' }, extra()),
      router.callAny('srv.other', {}, extra()),
    ];
    for (const refusal of refusals)
      await expect(refusal).rejects.toMatchObject({
        code: RATE_LIMITED_CODE,
        data: { limit: 'server_calls_per_minute', server: 'srv', retryAfterSeconds: 60 },
      });
    expect(forwarded).toHaveLength(1);
    expect(audited.filter((event) => event.outcome === 'rate-limited')).toHaveLength(3);
  });

  it("counts a call that reaches the Server once, and one its server's limit refuses spends nothing of its principal's", async () => {
    const { router, forwarded, takes } = setup({ metaTools: [EQUIP], limits: { calls_per_minute: 3, server_calls_per_minute: 1 } });
    await router.call({ name: 'srv_echo' }, extra(1));
    await expect(router.call({ name: 'srv_echo' }, extra(2))).rejects.toMatchObject({
      code: RATE_LIMITED_CODE,
      data: { limit: 'server_calls_per_minute', server: 'srv' },
    });
    expect(takes).toEqual([
      [LOCAL_PRINCIPAL.id, 'srv'],
      [LOCAL_PRINCIPAL.id, 'srv'],
    ]);
    // Of the principal's 3, the refused call spent none: two calls are left.
    await router.call({ name: 'equip-toolset', arguments: {} }, extra(3));
    await router.call({ name: 'srv_nothing' }, extra(4));
    await expect(router.call({ name: 'equip-toolset', arguments: {} }, extra(5))).rejects.toMatchObject({
      data: { limit: 'calls_per_minute' },
    });
    expect(takes.slice(2)).toEqual([
      [LOCAL_PRINCIPAL.id, undefined],
      [LOCAL_PRINCIPAL.id, undefined],
      [LOCAL_PRINCIPAL.id, undefined],
    ]);
    expect(forwarded).toHaveLength(1);
  });

  it("counts a call-tool call once when its tool is found, and one its server's limit refuses spends nothing of its principal's", async () => {
    const { router, forwarded, takes, audited } = setup({
      metaTools: [CALL_ANY],
      limits: { calls_per_minute: 3, server_calls_per_minute: 1 },
    });
    const callAny = (id: number) => router.call({ name: 'call-tool', arguments: { tool: 'srv.other', arguments: { a: id } } }, extra(id));
    expect(textOf(await callAny(1))).toBe('ok');
    await expect(callAny(2)).rejects.toMatchObject({ data: { limit: 'server_calls_per_minute', server: 'srv' } });
    expect(takes).toEqual([
      [LOCAL_PRINCIPAL.id, 'srv'],
      [LOCAL_PRINCIPAL.id, 'srv'],
    ]);
    expect(audited.map(({ action, tool, exposedTool, outcome }) => ({ action, tool, exposedTool, outcome }))).toEqual([
      { action: 'tool-call', tool: 'other', exposedTool: 'srv.other', outcome: 'ok' },
      { action: 'tool-call', tool: 'other', exposedTool: 'srv.other', outcome: 'rate-limited' },
    ]);
    // Of the principal's 3, the refused call spent none: a call-tool of a tool the catalog lacks is
    // counted against them alone, twice, then the limit holds.
    for (const id of [3, 4])
      expect((await router.call({ name: 'call-tool', arguments: { tool: 'srv.nothing' } }, extra(id))).isError).toBe(true);
    await expect(router.call({ name: 'call-tool', arguments: { tool: 'srv.nothing' } }, extra(5))).rejects.toMatchObject({
      data: { limit: 'calls_per_minute' },
    });
    expect(forwarded).toHaveLength(1);
  });

  it('records a meta-tool refused for the principal limit as what it does', async () => {
    const { router, audited } = setup({ metaTools: [EQUIP], limits: { calls_per_minute: 1 } });
    await router.call({ name: 'equip-toolset', arguments: {} }, extra(1));
    await expect(router.call({ name: 'equip-toolset', arguments: {} }, extra(2))).rejects.toMatchObject({
      code: RATE_LIMITED_CODE,
      data: { limit: 'calls_per_minute' },
    });
    expect(audited.map(({ action, outcome }) => ({ action, outcome }))).toEqual([
      { action: 'equip', outcome: 'ok' },
      { action: 'equip', outcome: 'rate-limited' },
    ]);
  });
});
