/**
 * Views of the bytes at the start of a reused read buffer, made once per length. A socket reads
 * into the same buffer time after time (proxy/socket-reads.ts), so a read of a length seen
 * before would get a new view of the same bytes of the same memory: the one made then serves.
 * A view is only good until the next read, made now or reused; when a write still holds the
 * buffer, the socket reads into another one, and the views of the old one are dropped.
 */

/** Lengths whose views are kept (a power of two): a length shares its place with others. */
const PLACES = 64;

export class StartViews {
  /** Where the views begin in the buffer: 0 for whole reads and packets, 4 for payloads. */
  readonly #from: number;
  readonly #views = new Array<Buffer | undefined>(PLACES);
  #source: Buffer | null = null;

  constructor(from: number) {
    this.#from = from;
  }

  /** `source[from, to)`: the view made before for that length of `source`, or a new one. */
  of(source: Buffer, to: number): Buffer {
    const views = this.#views;
    if (source !== this.#source) {
      views.fill(undefined);
      this.#source = source;
    }
    const length = to - this.#from;
    const place = length & (PLACES - 1);
    let view = views[place];
    if (view === undefined || view.length !== length) {
      view = source.subarray(this.#from, to);
      views[place] = view;
    }
    return view;
  }
}
