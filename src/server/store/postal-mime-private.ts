// The one place mailroom reaches into postal-mime's private parts: how a
// part's decoded bytes are collected. The package is pinned to an exact
// version in package.json (4.0.0); test/server/postal-mime-private.test.ts
// fails when an upgrade moves what this adapts, and the parse tests
// (summary.test.ts, the message routes) check what comes out.
//
// Why: postal-mime collects each part's bytes in chunks and joins them by
// making a `Blob` and reading it back (an asynchronous round through
// Node's blob store), and its quoted-printable decoder starts every part
// with a zeroed 100 KiB buffer. For the few-kilobyte mail tests send, those
// two were about half of a parse (bench/webhooks.ts: a webhook's
// `message.received` parses every mail). Here the chunks are joined in
// one copy, and a quoted-printable part starts with a small buffer that its
// own code flushes into chunks as it fills (what it does past 100 KiB
// anyway). The decoding itself is postal-mime's, byte for byte.
import PostalMime from 'postal-mime';

/** The part of postal-mime's decoders this adapts (mime-node.js, *-decoder.js). */
interface Decoder {
  chunks: (ArrayBuffer | ArrayBufferView | string)[];
  finalize(): Promise<ArrayBuffer>;
  flushBuffer?(): void;
  flushRemainder?(): void;
}
interface QpDecoderFields extends Decoder {
  maxChunkSize: number;
  buffer: Uint8Array;
  bufferPos: number;
}
interface MimeNode {
  contentDecoder: Decoder | null;
  setupContentDecoder: (this: MimeNode, transferEncoding: string) => void;
}

/** A quoted-printable part's first buffer; a larger part is flushed into chunks of this size. */
const QP_CHUNK_BYTES = 8 * 1024;

/** The chunks in one new ArrayBuffer, as `new Blob(chunks).arrayBuffer()` gives them (a string as UTF-8). */
export function joinChunks(chunks: readonly (ArrayBuffer | ArrayBufferView | string)[]): ArrayBuffer {
  const views = chunks.map((chunk) =>
    typeof chunk === 'string'
      ? Buffer.from(chunk, 'utf8')
      : chunk instanceof ArrayBuffer
        ? new Uint8Array(chunk)
        : new Uint8Array(chunk.buffer, chunk.byteOffset, chunk.byteLength),
  );
  const joined = new Uint8Array(views.reduce((sum, view) => sum + view.byteLength, 0));
  let at = 0;
  for (const view of views) {
    joined.set(view, at);
    at += view.byteLength;
  }
  return joined.buffer;
}

/** The decoder classes' prototypes, found through a parser's root node (none of them is exported). */
function decoderPrototypes(): { readonly node: MimeNode; readonly qp: object; readonly base64: object; readonly passThrough: object } {
  const root = (new PostalMime() as unknown as { root?: MimeNode }).root;
  if (!root || typeof root.setupContentDecoder !== 'function') throw new Error('postal-mime: no MimeNode at parser.root');
  const prototypeFor = (transferEncoding: string): object => {
    root.setupContentDecoder(transferEncoding);
    const decoder = root.contentDecoder;
    if (!decoder || !Array.isArray(decoder.chunks) || typeof decoder.finalize !== 'function') {
      throw new Error(`postal-mime: no decoder with chunks for ${transferEncoding}`);
    }
    return Object.getPrototypeOf(decoder) as object;
  };
  return {
    node: Object.getPrototypeOf(root) as MimeNode,
    qp: prototypeFor('quoted-printable'),
    base64: prototypeFor('base64'),
    passThrough: prototypeFor('7bit'),
  };
}

let adapted = false;

/** Adapts postal-mime's decoders (once per thread; what it parses is unchanged). */
export function adaptPostalMime(): void {
  if (adapted) return;
  adapted = true;
  const { node, qp, base64, passThrough } = decoderPrototypes();
  const qpDecoder = qp as Decoder;
  if (typeof qpDecoder.flushBuffer !== 'function') throw new Error('postal-mime: the quoted-printable decoder has no flushBuffer');
  if (typeof (base64 as Decoder).flushRemainder !== 'function') throw new Error('postal-mime: the base64 decoder has no flushRemainder');
  const setup = node.setupContentDecoder;
  node.setupContentDecoder = function (this: MimeNode, transferEncoding: string) {
    if (!/quoted-printable/i.test(transferEncoding)) return setup.call(this, transferEncoding);
    // The decoder's own fields, as its constructor sets them, with a smaller first buffer.
    const decoder = Object.create(qp) as QpDecoderFields;
    decoder.maxChunkSize = QP_CHUNK_BYTES;
    decoder.buffer = new Uint8Array(QP_CHUNK_BYTES);
    decoder.bufferPos = 0;
    decoder.chunks = [];
    this.contentDecoder = decoder;
  };
  (qp as Decoder).finalize = function (this: Decoder) {
    this.flushBuffer!();
    return Promise.resolve(joinChunks(this.chunks));
  };
  (base64 as Decoder).finalize = function (this: Decoder) {
    this.flushRemainder!();
    return Promise.resolve(joinChunks(this.chunks));
  };
  (passThrough as Decoder).finalize = function (this: Decoder) {
    return Promise.resolve(joinChunks(this.chunks));
  };
}
