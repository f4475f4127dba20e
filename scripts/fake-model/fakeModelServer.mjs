// The loopback HTTP server every scripted model fake runs on (claude-code-check's Messages API,
// clients-check's Responses and Gemini APIs): it listens on 127.0.0.1 at a free port, reads each
// request's body (parsed when it is JSON, else kept as text, null when empty) and hands it to the
// fake's own `answer`, which writes the reply in its API's wire format. It knows no model API.
import { createServer } from 'node:http';

/**
 * Start a fake whose `answer({ req, res, url, body })` replies to every request; returns its base
 * `url` and `close()`.
 */
export async function startFakeModelServer(answer) {
  const server = createServer((req, res) => {
    const chunks = [];
    req.on('data', (chunk) => chunks.push(chunk));
    req.on('end', () => {
      const text = Buffer.concat(chunks).toString('utf8');
      let body = null;
      try {
        body = text ? JSON.parse(text) : null;
      } catch {
        body = text;
      }
      answer({ req, res, url: new URL(req.url, 'http://127.0.0.1'), body });
    });
  });
  await new Promise((resolve) => server.listen(0, '127.0.0.1', resolve));
  return {
    url: `http://127.0.0.1:${server.address().port}`,
    close: () => new Promise((resolve) => server.close(resolve)),
  };
}
