// The client-facing Server. It differs from the SDK's in two ways. It has no tools/call wrapper:
// the SDK's parses every request a second time and re-validates every result against its tools/call
// result schema, returning a parsed copy: it strips fields its content schemas do not know (a newer
// server's additions), turns a result it cannot parse into an error, and refuses a task-augmented
// call's answer (a task, not content). A gateway forwards results untouched, and the copy costs time
// on every forwarded call; the request is still parsed once, where the handler is registered. And it
// connects through the session's intake, whoever connects it (the session, or the SDK's stdio entry).
import {
  Server,
  type Implementation,
  type JSONRPCRequest,
  type Result,
  type ServerContext,
  type ServerOptions,
  type Transport,
} from '@modelcontextprotocol/server';

type Handler = (request: JSONRPCRequest, ctx: ServerContext) => Promise<Result>;

/** A Server whose tools/call handler answers with its own result, as is, and that connects through `through(transport)`. */
export class PassthroughCallServer extends Server {
  readonly #through: (transport: Transport) => Transport;

  constructor(info: Implementation, options: ServerOptions, through: (transport: Transport) => Transport) {
    super(info, options);
    this.#through = through;
  }

  override connect(transport: Transport): Promise<void> {
    return super.connect(this.#through(transport));
  }

  protected override _wrapHandler(method: string, handler: Handler): Handler {
    return method === 'tools/call' ? handler : super._wrapHandler(method, handler);
  }
}
