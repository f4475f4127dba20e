// Reading an HTTP request body with a size limit, so a huge or endless upload cannot exhaust
// memory, and discarding the body of a request answered before it was read. A discarded body is
// drained unbuffered (not the socket destroyed), so the client still reads the answer: closing a
// socket with unread bytes in it makes the kernel send a reset, which reaches the client before
// the answer. Draining stops at a bound; past it the socket goes.
import type { IncomingMessage } from 'node:http';

/** How much of a refused body is read and discarded before the connection is dropped instead. */
export const DRAIN_LIMIT_BYTES = 64 * 1024 * 1024;

/** The body exceeded the limit. */
export class BodyTooLargeError extends Error {
  override readonly name = 'BodyTooLargeError';
}

/** The whole body as UTF-8 text, or BodyTooLargeError once it passes `maxBytes` (the rest is left unread). */
export function readBody(req: IncomingMessage, maxBytes: number): Promise<string> {
  return new Promise((resolve, reject) => {
    const declared = Number(req.headers['content-length']);
    if (Number.isFinite(declared) && declared > maxBytes) {
      reject(new BodyTooLargeError(`body of ${declared} bytes exceeds ${maxBytes}`));
      return;
    }
    const chunks: Buffer[] = [];
    let size = 0;
    const onData = (chunk: Buffer): void => {
      size += chunk.length;
      if (size <= maxBytes) {
        chunks.push(chunk);
        return;
      }
      req.off('data', onData);
      req.pause();
      chunks.length = 0;
      reject(new BodyTooLargeError(`body exceeds ${maxBytes} bytes`));
    };
    req.on('data', onData);
    req.once('end', () => resolve(Buffer.concat(chunks).toString('utf8')));
    req.once('error', reject);
  });
}

/** Whether part of the request's body has not been read yet. */
export function hasUnreadBody(req: IncomingMessage): boolean {
  if (req.complete) return false;
  return req.headers['transfer-encoding'] !== undefined || Number(req.headers['content-length'] ?? 0) > 0;
}

/**
 * Reads and drops the rest of the body; resolves when it has ended or the connection has gone.
 * Past DRAIN_LIMIT_BYTES the socket is destroyed.
 */
export function discardBody(req: IncomingMessage): Promise<void> {
  return new Promise((resolve) => {
    let size = 0;
    req.on('data', (chunk: Buffer) => {
      size += chunk.length;
      if (size > DRAIN_LIMIT_BYTES) req.socket.destroy();
    });
    req.once('end', () => resolve());
    req.once('close', () => resolve());
    req.resume();
  });
}
