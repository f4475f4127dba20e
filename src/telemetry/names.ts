// The names loadout's telemetry is recorded under: those of the OpenTelemetry semantic conventions
// for MCP (semantic-conventions-genai, docs/gen-ai/mcp.md) exactly, and loadout's own under
// `loadout.*` for what the conventions do not cover. No OpenTelemetry import: plain strings.

/** Span and metric attributes the MCP conventions (and the general ones they cite) define. */
export const ATTR = {
  methodName: 'mcp.method.name',
  protocolVersion: 'mcp.protocol.version',
  sessionId: 'mcp.session.id',
  resourceUri: 'mcp.resource.uri',
  toolName: 'gen_ai.tool.name',
  promptName: 'gen_ai.prompt.name',
  operationName: 'gen_ai.operation.name',
  requestId: 'jsonrpc.request.id',
  errorType: 'error.type',
  statusCode: 'rpc.response.status_code',
  networkTransport: 'network.transport',
  networkProtocolName: 'network.protocol.name',
  serverAddress: 'server.address',
  serverPort: 'server.port',
  clientAddress: 'client.address',
  clientPort: 'client.port',
  /** The database conventions' (the team store's statements). */
  dbSystem: 'db.system.name',
  dbCollection: 'db.collection.name',
  dbOperation: 'db.operation.name',
} as const;

/** loadout's own attributes. */
export const LOADOUT_ATTR = {
  /** The downstream server's name in servers.yaml. */
  serverName: 'loadout.server.name',
  /** The meta-tool a span or measurement is of. */
  metaTool: 'loadout.meta_tool.name',
  /** A search's query length in characters (its text only with LOADOUT_OTEL_RECORD_QUERY=true). */
  queryLength: 'loadout.search.query.length',
  queryText: 'loadout.search.query.text',
  /** How many tools a search returned. */
  resultCount: 'loadout.search.result.count',
  /** The toolset a meta-tool saved or equipped. */
  toolset: 'loadout.toolset.name',
  /** How many tools the toolset saved or equipped holds. */
  toolCount: 'loadout.toolset.tool.count',
  /** Who a measurement of equipped tools is for (a principal's hash, a toolset endpoint, a session). */
  principal: 'loadout.principal',
  /** Which rate limit refused a call: `calls_per_minute` (the principal's) or `server_calls_per_minute` (a server's). */
  limitKind: 'loadout.limit.kind',
} as const;

/** The metrics of the MCP conventions: histograms in seconds. */
export const MCP_METRIC = {
  serverOperation: 'mcp.server.operation.duration',
  clientOperation: 'mcp.client.operation.duration',
  serverSession: 'mcp.server.session.duration',
  clientSession: 'mcp.client.session.duration',
} as const;

/** The database conventions' histogram (s): one statement of the team store, sent to its answer. */
export const DB_METRIC = { clientOperation: 'db.client.operation.duration' } as const;

/** The bucket boundaries (s) the database conventions advise for it. */
export const DB_DURATION_BUCKETS_S = [0.001, 0.005, 0.01, 0.05, 0.1, 0.5, 1, 5, 10];

/** loadout's own metrics. */
export const LOADOUT_METRIC = {
  /** Counter: tools/call requests sent to a downstream server. */
  toolCalls: 'loadout.tool.calls',
  /** Counter: those that failed (a JSON-RPC error, or a result with isError). */
  toolErrors: 'loadout.tool.errors',
  /** Counters: downstream connections opened, opened again after an earlier one ended, ended unasked. */
  downstreamStarts: 'loadout.downstream.starts',
  downstreamRestarts: 'loadout.downstream.restarts',
  downstreamCrashes: 'loadout.downstream.crashes',
  /** Gauge: downstream connections open now. */
  connectedServers: 'loadout.downstream.connected',
  /** Gauge: tools equipped, per principal. */
  equippedTools: 'loadout.tools.equipped',
  /** Gauge: tools in the catalog. */
  catalogTools: 'loadout.catalog.tools',
  /** Histogram (s): one search of the catalog. */
  searchDuration: 'loadout.search.duration',
  /** Histogram (s): one meta-tool run. */
  metaToolDuration: 'loadout.meta_tool.duration',
  /** Counter: calls refused for a rate limit, by the limit's kind. */
  rateLimitRefusals: 'loadout.rate_limit.refusals',
  /** Gauge: 1 while the team store's change bus listens (LISTEN/NOTIFY), 0 while it reconnects. */
  storeListening: 'loadout.store.listening',
  /** Gauge: audit records in the spool (team store), not yet in the store. */
  auditSpooled: 'loadout.audit.records.spooled',
  /** Counter: audit records dropped, the spool full while the store could not take them. */
  auditDropped: 'loadout.audit.records.dropped',
} as const;

/** The explicit bucket boundaries (s) the conventions give for the MCP operation histograms. */
export const MCP_DURATION_BUCKETS_S = [0.01, 0.02, 0.05, 0.1, 0.2, 0.5, 1, 2, 5, 10, 30, 60, 120, 300];
