// Reading an HTTP request body with a size limit, so a huge or endless upload cannot exhaust
// memory. Past the limit the rest is drained unbuffered (not the socket destroyed), so the client
// still reads the 413: closing a socket with unread bytes in it makes the kernel send a reset,
// which reaches the client before the answer. Draining stops at a bound; past it the socket goes.
import type { IncomingMessage } from 'node:http';

/** How much of a refused body is read and discarded before the connection is dropped instead. */
export const DRAIN_LIMIT_BYTES = 64 * 1024 * 1024;

/** The body exceeded the limit. */
export class BodyTooLargeError extends Error {
  override readonly name = 'BodyTooLargeError';
}

/** The whole body as UTF-8 text, or BodyTooLargeError once it passes `maxBytes`. */
export function readBody(req: IncomingMessage, maxBytes: number): Promise<string> {
  return new Promise((resolve, reject) => {
    const declared = Number(req.headers['content-length']);
    let tooLarge = Number.isFinite(declared) && declared > maxBytes;
    const chunks: Buffer[] = [];
    let size = 0;
    req.on('data', (chunk: Buffer) => {
      size += chunk.length;
      if (tooLarge) {
        // The 413 was sent when the limit was passed; this only empties the socket.
        if (size > DRAIN_LIMIT_BYTES) req.socket.destroy();
        return;
      }
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
    if (tooLarge) reject(new BodyTooLargeError(`body of ${declared} bytes exceeds ${maxBytes}`));
  });
}
