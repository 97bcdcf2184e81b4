import type { Socket } from 'node:net';
import type { Request, Response } from 'express';

/** How long, and for how many more bytes, a refused upload's connection is read on after the answer. */
const LINGER_MS = 2000;
const LINGER_BYTES = 4 * 1024 * 1024;

/**
 * Ends the connection of an upload refused before its whole body arrived (too large, its import not
 * allowed): the answer goes out with `Connection: close`, and the rest of what the client is still
 * sending is read and dropped for a moment before the socket is closed. Closing a socket that has unread
 * bytes makes the kernel reset the connection, and a client reset while it is still writing loses the
 * answer it has not read yet (it sees EPIPE or ECONNRESET instead of the 413). Reading on for at most
 * LINGER_MS and LINGER_BYTES lets it read the answer, without ever taking the whole body.
 */
export function closeAfterAnswer(req: Request, res: Response): void {
  // Nothing left to read, or the client is gone already.
  if (req.complete || !req.socket) return;
  res.setHeader('Connection', 'close');
  const socket = req.socket as Socket & { destroySoon?: () => void };
  // Node's server calls destroySoon() once a Connection: close answer is written; that destroy is
  // what resets the connection, so it waits here.
  socket.destroySoon = () => {
    let read = 0;
    const close = () => {
      clearTimeout(timer);
      socket.destroy();
    };
    const timer = setTimeout(close, LINGER_MS);
    timer.unref();
    socket.on('data', (chunk: Buffer) => {
      read += chunk.length;
      if (read > LINGER_BYTES) close();
    });
    socket.once('end', close);
    socket.end();
    req.resume();
  };
}
