// Scripted stand-ins on loopback for the two model APIs the agent CLIs speak: OpenAI's Responses
// API (`POST /v1/responses`, server-sent events; Codex CLI) and Gemini's `streamGenerateContent`
// (`POST /v1beta/models/MODEL:streamGenerateContent?alt=sse`; Gemini CLI). Each request is reduced
// to what a model sees (the tool names offered, the tool results so far), handed to `decide`, and
// its decision (call a tool, or say a text) is written back in that API's wire format. Every
// request is recorded with its time. It knows nothing of loadout; the caller's script decides.
import { startFakeModelServer } from '../fake-model/fakeModelServer.mjs';

/**
 * Start the fake on 127.0.0.1 (a free port). `decide({ tools, results })` gets the offered tool
 * names as the model sees them and the results so far as `{ name, text }` in order, and returns
 * `{ call: { name, arguments } }` or `{ text }`.
 */
export async function startFakeModelApis(decide) {
  /** Every request: `{ atMs, url, api, tools, results, decision }`, or `{ atMs, url, unanswered }`. */
  const requests = [];
  let calls = 0;
  const server = await startFakeModelServer(({ req, res, url, body: given }) => {
    const atMs = Date.now();
    // An empty body, or one that is not JSON, is read as an empty request.
    const body = typeof given === 'object' && given !== null ? given : {};
    const api = url.pathname === '/v1/responses' ? RESPONSES : url.pathname.endsWith(':streamGenerateContent') ? GEMINI : undefined;
    if (req.method !== 'POST' || !api) {
      requests.push({ atMs, url: req.url, unanswered: true });
      return res.writeHead(404, { 'content-type': 'application/json' }).end('{"error":{"message":"not served by the fake"}}');
    }
    const seen = api.read(body);
    const decision = decide(seen);
    requests.push({ atMs, url: req.url, api: api.name, ...seen, decision });
    res.writeHead(200, { 'content-type': 'text/event-stream', 'cache-control': 'no-cache' });
    api.write(res, decision, `call_${++calls}`, body);
    res.end();
  });
  return { ...server, requests };
}

// Codex sends MCP tools as one namespace per server, names spelt with `_`, and calls them back by
// namespace and name; results come as function_call_output items, keyed by call_id.
const RESPONSES = {
  name: 'responses',
  read(body) {
    const tools = (body.tools ?? []).flatMap((tool) =>
      tool.type === 'namespace' ? (tool.tools ?? []).map((inner) => `${tool.name}.${inner.name}`) : tool.name ? [tool.name] : [],
    );
    const input = Array.isArray(body.input) ? body.input : [];
    const names = new Map(input.filter((item) => item.type === 'function_call').map((item) => [item.call_id, item.name]));
    const results = input
      .filter((item) => item.type === 'function_call_output')
      .map((item) => ({ name: names.get(item.call_id) ?? '?', text: outputText(item.output) }));
    return { tools, results, instructions: JSON.stringify(body.tools ?? []).includes('loadout') };
  },
  write(res, decision, callId, body) {
    const send = (type, data) => res.write(`event: ${type}\ndata: ${JSON.stringify({ type, ...data })}\n\n`);
    const id = `resp_${callId}`;
    let item;
    if (decision.call) {
      const [namespace, name] = decision.call.name.includes('.') ? decision.call.name.split('.') : [undefined, decision.call.name];
      item = {
        type: 'function_call',
        id: `fc_${callId}`,
        call_id: callId,
        ...(namespace && { namespace }),
        name,
        arguments: JSON.stringify(decision.call.arguments),
        status: 'completed',
      };
    } else {
      item = {
        type: 'message',
        id: `msg_${callId}`,
        role: 'assistant',
        status: 'completed',
        content: [{ type: 'output_text', text: decision.text, annotations: [] }],
      };
    }
    const response = { id, object: 'response', model: body.model, status: 'in_progress', output: [] };
    send('response.created', { response });
    send('response.output_item.done', { output_index: 0, item });
    send('response.completed', {
      response: { ...response, status: 'completed', output: [item], usage: { input_tokens: 100, output_tokens: 10, total_tokens: 110 } },
    });
  },
};

// A function_call_output's text, without the "Wall time: N seconds\nOutput:" Codex puts first.
function outputText(output) {
  const text =
    typeof output === 'string' ? output : Array.isArray(output) ? output.map((part) => part.text ?? '').join('\n') : JSON.stringify(output);
  return text.replace(/^Wall time: [^\n]*\nOutput:\s*/, '');
}

// Gemini CLI sends tools as functionDeclarations and the conversation as contents, a call's result
// as a functionResponse part named after the tool.
const GEMINI = {
  name: 'gemini',
  read(body) {
    const tools = (body.tools ?? []).flatMap((tool) => (tool.functionDeclarations ?? []).map((declaration) => declaration.name));
    const results = (body.contents ?? [])
      .flatMap((content) => content.parts ?? [])
      .filter((part) => part.functionResponse)
      .map((part) => ({ name: part.functionResponse.name, text: JSON.stringify(part.functionResponse.response) }));
    return { tools, results, declarations: body.tools };
  },
  write(res, decision) {
    const part = decision.call ? { functionCall: { name: decision.call.name, args: decision.call.arguments } } : { text: decision.text };
    const chunk = {
      candidates: [{ content: { role: 'model', parts: [part] }, finishReason: 'STOP', index: 0 }],
      usageMetadata: { promptTokenCount: 100, candidatesTokenCount: 10, totalTokenCount: 110 },
    };
    res.write(`data: ${JSON.stringify(chunk)}\n\n`);
  },
};
