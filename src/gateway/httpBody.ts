// Reading an HTTP request body with a size limit, so a huge or endless upload cannot exhaust
// memory. Past the limit the rest is drained unbuffered (not the socket destroyed), so the client
// still reads the 413; the server's request timeout bounds an endless upload.
import type { IncomingMessage } from 'node:http';

/** The body exceeded the limit. */
export class BodyTooLargeError extends Error {
  override readonly name = 'BodyTooLargeError';
}

/** The whole body as UTF-8 text, or BodyTooLargeError once it passes `maxBytes`. */
export function readBody(req: IncomingMessage, maxBytes: number): Promise<string> {
  return new Promise((resolve, reject) => {
    const declared = Number(req.headers['content-length']);
    let tooLarge = Number.isFinite(declared) && declared > maxBytes;
    if (tooLarge) {
      req.resume();
      reject(new BodyTooLargeError(`body of ${declared} bytes exceeds ${maxBytes}`));
      return;
    }
    const chunks: Buffer[] = [];
    let size = 0;
    req.on('data', (chunk: Buffer) => {
      if (tooLarge) return;
      size += chunk.length;
      if (size <= maxBytes) {
        chunks.push(chunk);
        return;
      }
      tooLarge = true;
      chunks.length = 0;
      reject(new BodyTooLargeError(`body exceeds ${maxBytes} bytes`));
    });
    req.once('end', () => {
      if (!tooLarge) resolve(Buffer.concat(chunks).toString('utf8'));
    });
    req.once('error', reject);
  });
}
