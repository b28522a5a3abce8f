/**
 * Per-statement digests for a proxy without the cache (--query-cache-size 0). With the cache,
 * the router counts each statement as it routes it; a plain relay has no router, so each worker
 * counts here what its sessions send: every COM_QUERY, and every execution of a statement
 * prepared on the session (under its prepared text's digest), with the time the server took to
 * answer. Nothing is looked up in a cache, so a digest has no hits, misses or bypasses.
 *
 * A text is read as under the server's default sql_mode: a relay does not probe its sessions.
 * Under ANSI_QUOTES or NO_BACKSLASH_ESCAPES a text with a double quote or a backslash may then
 * get another digest than the cache would give it (texts with either have no shape and are their
 * own digest anyway); what is counted stays the same.
 */
import { digestTextOf } from '../cache/statement-digests.ts';
import type { DigestGathering, DigestRecord, DigestTable } from '../cache/statement-digests.ts';
import { NameEncoding } from '../sql/name-encoding.ts';
import {
  LiteralSpans,
  findShape,
  hashText,
  matchesShape,
  shapeHash,
} from '../sql/statement-shape.ts';
import { StatementMemo, modeIndex } from './statement-memo.ts';
import type { ClassifyMode, MemoEntry } from './statement-memo.ts';

const DEFAULT_MODE: ClassifyMode = {
  ansiQuotes: false,
  noBackslashEscapes: false,
  lowerCaseTableNames: 0,
  names: NameEncoding.UTF8MB4,
};
const DEFAULT_MODE_INDEX = modeIndex(DEFAULT_MODE);
const defaultMode = (): ClassifyMode => DEFAULT_MODE;

/** Shapes remembered before the map starts over (a digest table holds 2 000 at most). */
const MAX_SHAPES = 5000;

/** The digest record of a statement shape. */
interface ShapeDigest {
  shape: string;
  record: DigestRecord;
}

/** One per worker, shared by its sessions (one thread: nothing is locked). */
export class RelayDigests {
  readonly #memo = new StatementMemo();
  readonly #table: DigestTable;
  /**
   * The records of the shapes seen, by the shape's hash (one per hash, confirmed by its text):
   * a text of a known shape finds its record in its bytes, with no memo entry and no string
   * made, where most of a relay's statements are new texts (their literals are new).
   */
  readonly #byShape = new Map<number, ShapeDigest>();
  readonly #spans = new LiteralSpans();
  /** Asks the main thread for every worker's digests (SELECT * FROM nicecache.digests). */
  readonly gather: () => DigestGathering;

  constructor(table: DigestTable, gather: () => DigestGathering) {
    this.#table = table;
    this.gather = gather;
  }

  /**
   * The record the statement in `payload` from `from` on is counted in, when its shape is one
   * seen before; null otherwise (statementOf and recordOf then find it).
   */
  knownShapeOf(payload: Buffer, from: number): DigestRecord | null {
    const spans = this.#spans;
    const to = payload.length;
    if (!findShape(payload, from, to, spans)) return null;
    const known = this.#byShape.get(shapeHash(payload, from, to, spans));
    if (known === undefined || !matchesShape(payload, from, to, spans, known.shape)) return null;
    return known.record;
  }

  /** The memo's entry of the statement in `payload` from `from` on (see StatementMemo). */
  statementOf(payload: Buffer, from: number, serverVersion: string): MemoEntry {
    return this.#memo.classifyBytes(payload, from, DEFAULT_MODE_INDEX, defaultMode, serverVersion);
  }

  /** The record `entry`'s executions are counted in (kept on the entry: one lookup per text). */
  recordOf(entry: MemoEntry): DigestRecord {
    let record = entry.digest;
    if (record === null) {
      record = this.#table.recordOf(digestTextOf(entry.shape, entry.keyText), entry.info.kind);
      entry.digest = record;
    }
    // Its shape's other texts take the record from their bytes from now on; not a statement of
    // the proxy's own (the nicecache schema), which must be seen as one.
    const shape = entry.shape;
    if (shape !== null && entry.info.control === null) {
      if (this.#byShape.size >= MAX_SHAPES) this.#byShape.clear();
      this.#byShape.set(hashText(shape), { shape, record });
    }
    return record;
  }
}
