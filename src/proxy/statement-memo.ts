/**
 * Per-worker memo of classified statements. Applications send the same texts over and over, and
 * a Map lookup of the text (about 0.1 µs for a sysbench statement) is cheaper than classifying it
 * again (about 0.7 µs). What a text means depends on sql_mode and the server, so those are part
 * of the memo's key; the memo is bounded and simply emptied when full.
 */
import { createHash } from 'node:crypto';
import { Doorkeeper } from '../cache/doorkeeper.ts';
import type { DigestRecord } from '../cache/statement-digests.ts';
import { classify, serverVersionNumber } from '../sql/statement-classifier.ts';
import type { LowerCaseTableNames, StatementInfo } from '../sql/statement-classifier.ts';
import { tokenizesTheSameInEveryMode } from '../sql/mode-independence.ts';
import {
  LiteralSpans,
  findShape,
  matchesShape,
  literalSpanAt,
  shapeHash,
  hashText,
  shapedKeyText,
  shapedKeyTextOf,
  shapeOf,
} from '../sql/statement-shape.ts';
import { withResolvableNames } from '../sql/name-encoding.ts';
import { pointValueOfBytes } from '../sql/point-access.ts';
import type { NameEncoding } from '../sql/name-encoding.ts';
import type { ExecutionPrefix } from './execution-keys.ts';
import type { PointRead } from './schema-catalog.ts';

const MAX_ENTRIES = 20_000;
/** Statement shapes kept, all modes together; emptied when full, as the memo is. */
const MAX_SHAPES = 5_000;
/** Session digests remembered before the table starts over. */
const MAX_SESSION_KEYS = 10_000;
/**
 * The doorkeeper's size: well above MAX_ENTRIES, so texts that repeat rarely collide with
 * one-time ones. It forgets after DOORKEEPER_RESET memo misses, before it fills up: at most
 * 80 000 of its 2^20 bits are set then, so a new text passes for one seen before at most 7.3% of
 * the time (1 - e^(-80000/2^20)), 3.7% on average. That is a 128 KiB filter per worker; at 2^18
 * bits the average was 14%, each one a text made a string and kept for nothing.
 */
const DOORKEEPER_BITS = 1 << 20;
const DOORKEEPER_RESET = MAX_ENTRIES * 4;

export interface ClassifyMode {
  ansiQuotes: boolean;
  noBackslashEscapes: boolean;
  lowerCaseTableNames: LowerCaseTableNames;
  /** How the session's character set spells non-ASCII table names (see name-encoding.ts). */
  names: NameEncoding;
}

/**
 * A classified statement and what the router derived from it last time, so a repeated statement
 * costs two Map lookups and no string building: the registry slots it reads (valid for one
 * schema and one load of the schema metadata) and its cache key (valid for one session digest;
 * reusing the very same key string also reuses the hash V8 keeps in it).
 */
export class MemoEntry {
  /** What the classifier says of the text; shared by the texts of one shape. */
  readonly info: StatementInfo;
  /**
   * The text as the cache keys it (the classifier's keyText for a text it classified; for a text
   * of a known shape its own, the shape's info being another text's).
   */
  readonly keyText: string;
  readSchema: string | null = null;
  readGeneration = -1;
  readSlots: Int32Array | null = null;
  /**
   * A point read's distinct keys whose rows `readSlots` were made of (an IN list's values, or
   * its one value); 0 when its slots were not made of its keys' rows.
   */
  readKeys = 0;
  establishesSnapshot = false;
  /** Reading it may write: a view whose stored functions may write or run DDL. */
  readMayWrite = false;
  /**
   * For a statement that writes, what #writeMarks derives from its tables, valid for one schema
   * and one load of the metadata as the read slots are: the registry slots its writes
   * invalidate (or 'everything'), and whether the tables it reads may write.
   */
  writeSchema: string | null = null;
  writeGeneration = -1;
  writeSlots: Int32Array | 'everything' | null = null;
  /**
   * Slots the writing session's own reads take as written besides `writeSlots` (an INSERT that
   * only adds rows: its table's, see SchemaCatalog.rowsAddedTo); null when none.
   */
  writeOwnSlots: Int32Array | null = null;
  writeReadsMayWrite = false;
  keySession: string | null = null;
  key = '';
  /** keyHashOf(key), made with it. */
  keyHash = 0;
  /** The text reads the same under any sql_mode and character set (see mode-independence.ts). */
  readonly modeIndependent: boolean;
  /** The prefix of its executions' keys, for one session key and schema (see execution-keys.ts). */
  executePrefix: ExecutionPrefix | null = null;
  executePrefixSession = '';
  executePrefixSchema: string | null = null;
  /** The statement's bytes as the client sent them, when it was looked up by them (a copy). */
  bytes: Buffer | null = null;
  /** Its shape (statement-shape.ts), or null when it has none. */
  shape: string | null = null;
  /** Its per-statement statistics in this worker, once it has run (statement-digests.ts). */
  digest: DigestRecord | null = null;
  /**
   * This text's values of `info.point`'s candidates, in their order (null where one is not a
   * plain integer here); null when the statement has none. Only these are this text's: the
   * values in `info` are those of the text of its shape that was classified.
   */
  pointValues: ReadonlyArray<string | null> | null = null;
  /** What the texts of its shape share about their point candidates, when it has some. */
  pointShape: PointShape | null = null;

  constructor(info: StatementInfo, modeIndependent: boolean, keyText: string = info.keyText) {
    this.info = info;
    this.keyText = keyText;
    this.modeIndependent = modeIndependent;
  }

  /**
   * Takes what the router derived from the tables `other` reads and writes, which are this
   * entry's too (a text of the same shape): valid for the same schema and metadata load, as it
   * was there.
   */
  shareTablesOf(other: MemoEntry): void {
    this.readSchema = other.readSchema;
    this.readGeneration = other.readGeneration;
    this.readSlots = other.readSlots;
    this.readKeys = other.readKeys;
    this.establishesSnapshot = other.establishesSnapshot;
    this.readMayWrite = other.readMayWrite;
    this.writeSchema = other.writeSchema;
    this.writeGeneration = other.writeGeneration;
    this.writeSlots = other.writeSlots;
    this.writeOwnSlots = other.writeOwnSlots;
    this.writeReadsMayWrite = other.writeReadsMayWrite;
  }
}

/**
 * What the texts of a point statement's shape share: where each point candidate's literal is
 * among the shape's literals (-1 where it is none; null for a text with no shape), so that a
 * text of the shape reads its own values there; and what their reads come to for one schema and
 * metadata load (the router adds each text's own row): the catalog's PointRead, or the slots
 * every text shares when the reads are no point read.
 */
export class PointShape {
  readonly ordinals: Int32Array | null;
  schema: string | null = null;
  generation = -1;
  read: PointRead | null = null;
  sharedSlots: Int32Array | null = null;
  readMayWrite = false;
  establishesSnapshot = false;

  constructor(ordinals: Int32Array | null) {
    this.ordinals = ordinals;
  }
}

/** How many classify modes there are. */
const MODES = 36;

/** The memo's index of a classify mode. */
export function modeIndex(mode: ClassifyMode): number {
  return (
    (mode.ansiQuotes ? 1 : 0) +
    (mode.noBackslashEscapes ? 2 : 0) +
    mode.lowerCaseTableNames * 4 +
    mode.names * 12
  );
}

/** FNV-1a over `bytes[from, to)`: no string is built to find a statement sent before. */
export function hashBytes(bytes: Buffer, from: number, to: number): number {
  let hash = 0x811c9dc5;
  for (let at = from; at < to; at++) hash = Math.imul(hash ^ bytes[at]!, 0x01000193);
  return hash >>> 0;
}

/**
 * Whether another text of the statement's shape has the same facts but its key text: a single
 * data statement. The proxy's control statements (SHOW STATUS's table, SET, PREPARE ...) carry
 * values of their own, and a text of several statements is kept out for simplicity.
 */
function carriesToItsShape(info: StatementInfo): boolean {
  return (
    info.control === null &&
    !info.multiStatement &&
    (info.kind === 'select' ||
      info.kind === 'insert' ||
      info.kind === 'update' ||
      info.kind === 'delete' ||
      info.kind === 'replace')
  );
}

/**
 * An entry for a text of `known`'s shape, keyed by `keyText`: the same facts, and what the router
 * derived from the tables they name. A shaped text tokenizes the same in every mode (no
 * backslash, double quote, non-ASCII).
 */
function sameShapeAs(
  known: MemoEntry,
  keyText: string,
  bytes: Buffer,
  spans: LiteralSpans,
): MemoEntry {
  const entry = new MemoEntry(known.info, true, keyText);
  // A point statement's slots are its own values' (the router computes them per text).
  if (known.info.point === null) entry.shareTablesOf(known);
  else {
    entry.pointShape = known.pointShape;
    entry.pointValues = pointValuesOf(known.pointShape, bytes, spans);
  }
  entry.shape = known.shape;
  entry.digest = known.digest;
  return entry;
}

/** The values of a shape's point candidates in the text whose literals are `spans` of `bytes`. */
function pointValuesOf(
  shape: PointShape | null,
  bytes: Buffer,
  spans: LiteralSpans,
): Array<string | null> | null {
  const ordinals = shape?.ordinals ?? null;
  if (ordinals === null) return null;
  // Its own size from the start: an array grown by push gets room for 17 (a miss's garbage).
  const values = new Array<string | null>(ordinals.length);
  for (let i = 0; i < ordinals.length; i++) {
    const ordinal = ordinals[i]!;
    values[i] =
      ordinal < 0 || ordinal >= spans.count
        ? null
        : pointValueOfBytes(bytes, spans.starts[ordinal]!, spans.ends[ordinal]!);
  }
  return values;
}

/**
 * Are `payload[from, to)` the bytes of `bytes`? Compared in a loop: for a statement's few dozen
 * bytes that costs less than Buffer's compare, whose arguments are checked on every call.
 */
function sameBytes(payload: Buffer, from: number, to: number, bytes: Buffer): boolean {
  if (bytes.length !== to - from) return false;
  for (let at = 0; at < bytes.length; at++) if (payload[from + at] !== bytes[at]) return false;
  return true;
}

export class StatementMemo {
  /**
   * One map per classify mode (ANSI_QUOTES, NO_BACKSLASH_ESCAPES, lower_case_table_names, the
   * names' encoding).
   */
  readonly #byMode: Array<Map<string, MemoEntry>> = Array.from(
    { length: MODES },
    () => new Map<string, MemoEntry>(),
  );
  /**
   * The same entries by a hash of their bytes, per mode: one entry per hash, the last one looked
   * up (another text with the same hash takes its place), confirmed by comparing the bytes.
   */
  readonly #byBytes: Array<Map<number, MemoEntry>> = Array.from(
    { length: MODES },
    () => new Map<number, MemoEntry>(),
  );
  #size = 0;
  /**
   * The facts of every statement shape classified, per mode, by the shape's hash (see
   * #classifyNew): one entry per hash, the last shape classified, confirmed by its text.
   */
  readonly #byShape: Array<Map<number, MemoEntry>> = Array.from(
    { length: MODES },
    () => new Map<number, MemoEntry>(),
  );
  #shapes = 0;
  /** Where the literals of the text being looked up by its shape are (reused). */
  readonly #spans = new LiteralSpans();
  /**
   * Only texts seen before are kept: statements whose literals differ every time (a point
   * select by a random id, an insert of new values) would otherwise fill the memo with entries
   * no one looks up again, which live long enough to be promoted and cost old-generation GC, and
   * clear it for the texts that do repeat. A text that repeats is classified twice, then kept.
   */
  readonly #doorkeeper = new Doorkeeper(DOORKEEPER_BITS, DOORKEEPER_RESET);
  #serverVersion = '';
  #serverVersionNumber: number | undefined;

  /** `serverVersion` is the greeting's: versioned comments are judged by it. */
  classify(sql: string, mode: ClassifyMode, serverVersion: string): MemoEntry {
    this.#serve(serverVersion);
    return this.#classifyText(
      sql,
      mode,
      modeIndex(mode),
      this.#doorkeeper.seenBefore(hashText(sql)),
    );
  }

  /**
   * The entry of the statement in `payload` from `from` to its end (Latin-1: every byte one
   * character, as classify() reads it). A statement looked up before costs a hash of its bytes,
   * one Map lookup and one comparison: no string. A text seen for the first time, of a shape
   * known, costs one string (its key text). `mode` is made only when the text is classified.
   */
  classifyBytes(
    payload: Buffer,
    from: number,
    index: number,
    mode: () => ClassifyMode,
    serverVersion: string,
  ): MemoEntry {
    const to = payload.length;
    const hash = hashBytes(payload, from, to);
    const byBytes = this.#byBytes[index]!;
    const known = byBytes.get(hash);
    if (
      known !== undefined &&
      serverVersion === this.#serverVersion &&
      sameBytes(payload, from, to, known.bytes!)
    ) {
      return known;
    }
    this.#serve(serverVersion);
    if (!this.#doorkeeper.seenBefore(hash)) {
      // Likely a text that will not come again (its literals are new): not kept, and when its
      // shape is known, not even made a string.
      return (
        this.#ofKnownShape(payload, from, to, index) ??
        this.#classifyText(payload.toString('latin1', from), mode(), index, false)
      );
    }
    // Seen before: kept, under its text and its bytes.
    const sql = payload.toString('latin1', from);
    const memo = this.#byMode[index]!;
    let entry = memo.get(sql);
    if (entry === undefined) {
      entry = this.#ofKnownShape(payload, from, to, index) ?? this.#classifyNew(sql, mode(), index);
      this.#keep(memo, sql, entry);
    }
    // Its own copy: the payload is a view of a read buffer the next read overwrites.
    entry.bytes ??= Buffer.from(payload.subarray(from));
    byBytes.set(hash, entry);
    return entry;
  }

  /** The memo's entry of `sql`, or a new one, kept when `keep` (the text was seen before). */
  #classifyText(sql: string, mode: ClassifyMode, index: number, keep: boolean): MemoEntry {
    const memo = this.#byMode[index]!;
    let entry = memo.get(sql);
    if (entry === undefined) {
      entry = this.#classifyNew(sql, mode, index);
      if (keep) this.#keep(memo, sql, entry);
    }
    return entry;
  }

  #keep(memo: Map<string, MemoEntry>, sql: string, entry: MemoEntry): void {
    if (this.#size >= MAX_ENTRIES) this.#clear();
    memo.set(sql, entry);
    this.#size++;
  }

  /** The memo serves one server version: a text can mean otherwise on another. */
  #serve(serverVersion: string): void {
    if (serverVersion === this.#serverVersion) return;
    // One backend, one version: this only happens when the server was replaced.
    this.#clear();
    this.#serverVersion = serverVersion;
    this.#serverVersionNumber = serverVersionNumber(serverVersion) ?? undefined;
  }

  /**
   * A new entry for the statement in `payload[from, to)` from the facts of a text of its shape
   * classified before, found with no string built; null when its shape is not known.
   */
  #ofKnownShape(payload: Buffer, from: number, to: number, index: number): MemoEntry | null {
    const spans = this.#spans;
    if (!findShape(payload, from, to, spans)) return null;
    const known = this.#byShape[index]!.get(shapeHash(payload, from, to, spans));
    if (known === undefined || !matchesShape(payload, from, to, spans, known.shape!)) return null;
    return sameShapeAs(known, shapedKeyTextOf(payload, from, to), payload, spans);
  }

  /**
   * A text not in the memo: its facts are those of a text of the same shape classified before
   * (statement-shape.ts), when there is one; otherwise it is classified.
   */
  #classifyNew(sql: string, mode: ClassifyMode, index: number): MemoEntry {
    const shape = shapeOf(sql);
    const shapes = this.#byShape[index]!;
    const spans = this.#spans;
    // A shaped text is ASCII: its bytes are its characters.
    const bytes = shape === null ? null : Buffer.from(sql, 'latin1');
    if (bytes !== null) findShape(bytes, 0, bytes.length, spans);
    if (shape !== null) {
      const known = shapes.get(hashText(shape));
      if (known !== undefined && known.shape === shape)
        return sameShapeAs(known, shapedKeyText(sql), bytes!, spans);
    }
    const info = withResolvableNames(
      classify(sql, { ...mode, serverVersion: this.#serverVersionNumber }),
      mode.names,
      mode.lowerCaseTableNames,
    );
    const entry = new MemoEntry(info, tokenizesTheSameInEveryMode(sql));
    entry.shape = shape;
    const point = info.point;
    if (point !== null) {
      entry.pointValues = point.candidates.map((candidate) => candidate.value);
      // Where each value is among the shape's literals, for the other texts of the shape.
      entry.pointShape = new PointShape(
        bytes === null
          ? null
          : Int32Array.from(point.candidates, (candidate) => literalSpanAt(spans, candidate.at)),
      );
    }
    if (shape !== null && carriesToItsShape(info)) {
      if (this.#shapes >= MAX_SHAPES) {
        for (const map of this.#byShape) map.clear();
        this.#shapes = 0;
      }
      // The first entry of its shape: what the router derives from its tables serves the others.
      shapes.set(hashText(shape), entry);
      this.#shapes++;
    }
    return entry;
  }

  #clear(): void {
    for (const memo of this.#byMode) memo.clear();
    for (const memo of this.#byBytes) memo.clear();
    for (const memo of this.#byShape) memo.clear();
    this.#size = this.#shapes = 0;
  }
}

/**
 * Session digests (everything a result depends on besides the statement) made short ids, so a
 * cache key is the id and the statement text, not the whole digest every time. The store is
 * every worker's, so an id must name the same digest in each: it is the digest's SHA-256, cut
 * to 96 bits (a collision, which would share results between sessions that differ, wants about
 * 2^48 digests), and remembered here so a digest is hashed once per worker.
 */
export class SessionKeys {
  readonly #ids = new Map<string, string>();

  idOf(digest: string): string {
    let id = this.#ids.get(digest);
    if (id === undefined) {
      id = createHash('sha256').update(digest).digest('base64url').slice(0, 16);
      if (this.#ids.size >= MAX_SESSION_KEYS) this.#ids.clear();
      this.#ids.set(digest, id);
    }
    return id;
  }
}
