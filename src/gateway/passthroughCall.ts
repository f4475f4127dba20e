// The client-facing Server, minus the SDK Server's tools/call wrapper. That wrapper parses every
// request a second time and re-validates every result against the SDK's tools/call result schema,
// returning a parsed copy: it strips fields its content schemas do not know (a newer server's
// additions), turns a result it cannot parse into an error, and refuses a task-augmented call's
// answer (a task, not content). A gateway forwards results untouched, and the copy costs time on
// every forwarded call. The request is still parsed once, where the handler is registered.
import { Server, type JSONRPCRequest, type Result, type ServerContext } from '@modelcontextprotocol/server';

type Handler = (request: JSONRPCRequest, ctx: ServerContext) => Promise<Result>;

/** A Server whose tools/call handler answers with its own result, as is. */
export class PassthroughCallServer extends Server {
  protected override _wrapHandler(method: string, handler: Handler): Handler {
    return method === 'tools/call' ? handler : super._wrapHandler(method, handler);
  }
}
