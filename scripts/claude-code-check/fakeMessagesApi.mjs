// A scripted stand-in for Anthropic's Messages API on loopback, for running the real Claude Code
// offline: it records every request body and answers POST /v1/messages with what `reply` returns
// for that body (text or tool_use blocks), streamed as server-sent events when the request asks
// for a stream. It knows nothing of loadout; the caller's script decides each answer.
import { startFakeModelServer } from '../fake-model/fakeModelServer.mjs';

/**
 * Start the fake on 127.0.0.1 (a free port). `reply(body)` returns the content blocks of the
 * answer, e.g. `[{ type: 'text', text: 'ok' }]` or `[{ type: 'tool_use', id, name, input }]`.
 */
export async function startFakeMessagesApi(reply) {
  /** Every request received: `{ method, url, body }` (body parsed when it is JSON). */
  const requests = [];
  let answered = 0;
  const server = await startFakeModelServer(({ req, res, url, body }) => {
    requests.push({ method: req.method, url: req.url, body });
    if (req.method === 'POST' && url.pathname === '/v1/messages/count_tokens') return sendJson(res, { input_tokens: 100 });
    if (req.method !== 'POST' || url.pathname !== '/v1/messages')
      return sendJson(res, { type: 'error', error: { type: 'not_found_error', message: `${req.method} ${url.pathname}` } }, 404);
    const content = reply(body);
    const message = {
      id: `msg_fake_${++answered}`,
      type: 'message',
      role: 'assistant',
      model: body.model,
      content,
      stop_reason: content.some((block) => block.type === 'tool_use') ? 'tool_use' : 'end_turn',
      stop_sequence: null,
      usage: { input_tokens: 100, output_tokens: 10 },
    };
    if (body.stream) streamMessage(res, message);
    else sendJson(res, message);
  });
  return { ...server, requests };
}

function sendJson(res, value, status = 200) {
  res.writeHead(status, { 'content-type': 'application/json' }).end(JSON.stringify(value));
}

// The event sequence of a streamed message: each block whole in one delta.
function streamMessage(res, message) {
  res.writeHead(200, { 'content-type': 'text/event-stream', 'cache-control': 'no-cache' });
  const send = (type, data) => res.write(`event: ${type}\ndata: ${JSON.stringify({ type, ...data })}\n\n`);
  send('message_start', { message: { ...message, content: [], stop_reason: null, usage: { ...message.usage, output_tokens: 0 } } });
  message.content.forEach((block, index) => {
    if (block.type === 'text') {
      send('content_block_start', { index, content_block: { type: 'text', text: '' } });
      send('content_block_delta', { index, delta: { type: 'text_delta', text: block.text } });
    } else {
      send('content_block_start', { index, content_block: { ...block, input: {} } });
      send('content_block_delta', { index, delta: { type: 'input_json_delta', partial_json: JSON.stringify(block.input) } });
    }
    send('content_block_stop', { index });
  });
  send('message_delta', {
    delta: { stop_reason: message.stop_reason, stop_sequence: null },
    usage: { output_tokens: message.usage.output_tokens },
  });
  send('message_stop', {});
  res.end();
}
