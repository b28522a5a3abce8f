/**
 * Cache keys of prepared-statement executions, interned by their bytes. An execution's key is
 * the statement's prefix (session key, schema, text) and its parameters as the client bound them:
 * null bitmap, types, values. Building that string for every execution, and hashing the new
 * string in the store's map, cost 2.5-4 µs of a ~36 µs binary hit; here a repeated execution is
 * one pass of FNV-1a over its parameter bytes, a map lookup by number and a byte comparison, and
 * it gets back the very same key string, whose hash V8 has kept.
 *
 * Per worker and bounded: when full, the table is emptied and keys are built again as they come.
 * A key is interned at its second sighting: most executions of a read-mostly workload with many
 * distinct values are seen once (a miss), and interning those would only fill the table with
 * objects the GC has to carry and then throw away.
 */

/** Keys kept before the table starts over. */
const MAX_KEYS = 50_000;
/** Hashes of parameter bytes seen once, direct-mapped (a collision only interns a key early). */
const SEEN_ONCE_SLOTS = 1 << 16;

/** A statement prefix: the part of a key shared by all executions of one statement in one state. */
export interface ExecutionPrefix {
  /** Unique to this prefix string for the worker's life (a prefix may have several ids). */
  readonly id: number;
  readonly text: string;
}

class InternedKey {
  readonly prefixId: number;
  /** Null bitmap, types and values: what follows the prefix in `key`, as bytes. */
  readonly bytes: Buffer;
  readonly key: string;
  next: InternedKey | null;

  constructor(prefixId: number, bytes: Buffer, key: string, next: InternedKey | null) {
    this.prefixId = prefixId;
    this.bytes = bytes;
    this.key = key;
    this.next = next;
  }
}

export class ExecutionKeys {
  readonly #byHash = new Map<number, InternedKey>();
  readonly #seenOnce = new Int32Array(SEEN_ONCE_SLOTS);
  /** Where a key is put together before it is made a string (grown as needed). */
  #scratch = Buffer.allocUnsafeSlow(256);
  #size = 0;
  #nextPrefixId = 0;

  /** A new prefix: its id is never given to another text. */
  prefix(text: string): ExecutionPrefix {
    return { id: this.#nextPrefixId++, text };
  }

  /**
   * The key of an execution whose parameters are `payload[from, split)`, then `types` (null when
   * they are in the payload), then `payload[after, end)`.
   */
  keyOf(
    prefix: ExecutionPrefix,
    payload: Buffer,
    from: number,
    split: number,
    types: Buffer | null,
    after: number,
  ): string {
    const end = payload.length;
    let hash = fnv(0x811c9dc5 ^ prefix.id, payload, from, split);
    if (types !== null) hash = fnv(hash, types, 0, types.length);
    hash = fnv(hash, payload, after, end);
    const head = this.#byHash.get(hash) ?? null;
    for (let entry = head; entry !== null; entry = entry.next) {
      if (
        entry.prefixId === prefix.id &&
        sameBytes(entry.bytes, payload, from, split, types, after, end)
      ) {
        return entry.key;
      }
    }
    const typesLength = types?.length ?? 0;
    const length = split - from + typesLength + end - after;
    if (this.#scratch.length < length) this.#scratch = Buffer.allocUnsafeSlow(length * 2);
    const scratch = this.#scratch;
    payload.copy(scratch, 0, from, split);
    types?.copy(scratch, split - from);
    payload.copy(scratch, split - from + typesLength, after, end);
    // Latin-1 keeps every byte as one character: equal keys are equal bytes.
    const key = `${prefix.text}\u0001${scratch.toString('latin1', 0, length)}`;
    const seen = hash & (SEEN_ONCE_SLOTS - 1);
    if (this.#seenOnce[seen] !== hash) {
      this.#seenOnce[seen] = hash;
      return key;
    }
    const bytes = Buffer.allocUnsafe(length);
    scratch.copy(bytes, 0, 0, length);
    let next = head;
    if (this.#size >= MAX_KEYS) {
      this.#byHash.clear();
      this.#size = 0;
      next = null;
    }
    this.#byHash.set(hash, new InternedKey(prefix.id, bytes, key, next));
    this.#size++;
    return key;
  }
}

/** 32-bit FNV-1a over `bytes[from, to)`, continuing from `hash`. */
function fnv(hash: number, bytes: Buffer, from: number, to: number): number {
  for (let index = from; index < to; index++) {
    hash = Math.imul(hash ^ bytes[index]!, 0x01000193);
  }
  return hash;
}

function sameBytes(
  stored: Buffer,
  payload: Buffer,
  from: number,
  split: number,
  types: Buffer | null,
  after: number,
  end: number,
): boolean {
  const typesLength = types?.length ?? 0;
  if (stored.length !== split - from + typesLength + end - after) return false;
  let at = 0;
  for (let index = from; index < split; index++) if (stored[at++] !== payload[index]) return false;
  for (let index = 0; index < typesLength; index++)
    if (stored[at++] !== types![index]) return false;
  for (let index = after; index < end; index++) if (stored[at++] !== payload[index]) return false;
  return true;
}
