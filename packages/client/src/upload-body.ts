// The raw body of an upload (a release's file): bytes, a Blob, or a stream. A stream is handed to fetch
// chunk by chunk, only when fetch asks for the next one, so a large file is never read whole into
// memory; it can be read only once, so a request carrying one is never retried.
import { describe } from './arguments';
import { utf8 } from './encoding';

/**
 * What an upload may send: bytes (a Node Buffer is a Uint8Array), a Blob (or a File), a web
 * ReadableStream, or any async iterable of bytes, such as a Node Readable (`fs.createReadStream(path)`).
 */
export type UploadBody =
  | Uint8Array
  | ArrayBuffer
  | Blob
  | ReadableStream<Uint8Array>
  | AsyncIterable<Uint8Array | string>;

/** An upload body as fetch takes it. */
export interface PreparedUpload {
  body: BodyInit;
  /** A stream: fetch needs `duplex: 'half'` with it, and it cannot be sent a second time. */
  streamed: boolean;
}

// Checked by shape, not instanceof: a Buffer or a stream made in another realm (a worker, a test
// sandbox, an Electron preload) is no instance of this realm's classes.
const isBlob = (v: object): v is Blob =>
  typeof (v as Blob).stream === 'function' &&
  typeof (v as Blob).arrayBuffer === 'function' &&
  typeof (v as Blob).size === 'number';
const isWebStream = (v: object): v is ReadableStream<Uint8Array> =>
  typeof (v as ReadableStream).getReader === 'function';
const isAsyncIterable = (v: object): v is AsyncIterable<Uint8Array | string> =>
  typeof (v as AsyncIterable<unknown>)[Symbol.asyncIterator] === 'function';

/** The body for fetch, or a TypeError naming what was given instead. */
export function prepareUpload(value: unknown, name: string): PreparedUpload {
  if (typeof value === 'object' && value !== null) {
    if (ArrayBuffer.isView(value) || Object.prototype.toString.call(value) === '[object ArrayBuffer]')
      return { body: value as unknown as BodyInit, streamed: false };
    if (isBlob(value)) return { body: value, streamed: false };
    if (isWebStream(value)) return { body: value, streamed: true };
    if (isAsyncIterable(value)) return { body: streamOf(value), streamed: true };
  }
  throw new TypeError(
    `${name} must be bytes (Uint8Array, Buffer, ArrayBuffer), a Blob, a ReadableStream or a Node Readable, got ${describe(value)}`,
  );
}

/**
 * A web ReadableStream over an async iterable, pulled one chunk at a time: fetch asks for a chunk only
 * once it has sent the previous one, so a file goes out at the network's pace. Cancelling it (an aborted
 * request) closes the source, so a file stream's descriptor is not left open.
 */
function streamOf(source: AsyncIterable<Uint8Array | string>): ReadableStream<Uint8Array> {
  const iterator = source[Symbol.asyncIterator]();
  return new ReadableStream<Uint8Array>({
    async pull(controller) {
      const next = await iterator.next();
      if (next.done) controller.close();
      else controller.enqueue(typeof next.value === 'string' ? utf8(next.value) : next.value);
    },
    async cancel(reason) {
      await iterator.return?.(reason);
    },
  });
}
