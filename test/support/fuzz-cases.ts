/**
 * Generated protocol abuse for test/support/protocol-fuzz.ts: fast-check arbitraries for what a
 * broken or hostile client may send in each phase of a connection, and their encoding into
 * the exact bytes to write.
 *
 * A case is pure data (numbers and byte arrays), so it can be printed and replayed. Packets are
 * built from templates — the commands a real client sends, made with the project's encoders —
 * then mutated (cut short, bytes flipped or replaced, garbage added, the header's length or
 * sequence id made to lie), or are random bytes altogether. The templates are weighted toward
 * what has crashed proxies: cacheable SELECTs several connections share (so one waits for
 * another's miss), with prepared-statement commands pipelined behind them.
 */
import fc from 'fast-check';
import { Command, MAX_PACKET_PAYLOAD } from '../../src/protocol/constants.ts';
import {
  execute,
  fetch,
  prepare,
  sendLongData,
  statementCommand,
} from '../../src/protocol/statement-commands.ts';
import type { Param } from '../../src/protocol/statement-commands.ts';
import { PacketFramer } from '../../src/protocol/packet-framer.ts';

export const FUZZ_DB = 'nc_fuzz';

/** Edits applied to a packet's payload, positions as fractions of its length (0..65535). */
export type Mutation =
  | { op: 'truncate'; at: number }
  | { op: 'cut'; keep: number }
  | { op: 'flip'; at: number; bit: number }
  | { op: 'set'; at: number; value: number }
  | { op: 'insert'; at: number; bytes: Uint8Array }
  | { op: 'append'; bytes: Uint8Array };

export type PacketSpec =
  /** A template (index into the phase's list) with edits. */
  | { kind: 'template'; template: number; mutations: Mutation[]; seq: number; lengthDelta: number }
  /** A command byte and random bytes. */
  | { kind: 'random'; command: number; body: Uint8Array; seq: number }
  | { kind: 'empty'; seq: number }
  /** Bytes written as they are: a header that says anything. */
  | { kind: 'raw'; bytes: Uint8Array }
  /** A payload of 16 MB or more, sent as several packets (a few bytes past 0xFFFFFF). */
  | { kind: 'long'; extra: number; continuationSeq: number | null };

export interface CommandCase {
  phase: 'command';
  packets: PacketSpec[];
  /**
   * A second connection of the lane invalidates and sends the first packet's read just before:
   * the batch's read then waits for that miss, with the rest queued behind it.
   */
  partner: boolean;
  /** Where the stream is cut into separate writes (fractions, 0..65535). */
  splits: number[];
  /** Cut the stream short here (a fraction), leaving a packet the server waits for. */
  truncateAt: number | null;
}

export interface LoginCase {
  /** Instead of the handshake response, or instead of the answer to an auth switch. */
  phase: 'handshake' | 'auth-switch';
  /** Template 0 is the valid answer for this phase. */
  packets: PacketSpec[];
  splits: number[];
  truncateAt: number | null;
}

export type FuzzCase = CommandCase | LoginCase;

const FRACTION = 65536;

function position(fraction: number, length: number): number {
  return Math.floor((fraction * (length + 1)) / FRACTION);
}

const fraction = fc.nat(FRACTION - 1);
const smallBytes = fc.uint8Array({ minLength: 1, maxLength: 24 });

const mutation: fc.Arbitrary<Mutation> = fc.oneof(
  { weight: 4, arbitrary: fc.record({ op: fc.constant('truncate' as const), at: fraction }) },
  // Keep only the first few bytes: command byte, part of a statement id, part of a bitmap.
  { weight: 4, arbitrary: fc.record({ op: fc.constant('cut' as const), keep: fc.nat(12) }) },
  {
    weight: 3,
    arbitrary: fc.record({ op: fc.constant('flip' as const), at: fraction, bit: fc.nat(7) }),
  },
  {
    weight: 3,
    arbitrary: fc.record({ op: fc.constant('set' as const), at: fraction, value: fc.nat(255) }),
  },
  {
    weight: 1,
    arbitrary: fc.record({ op: fc.constant('insert' as const), at: fraction, bytes: smallBytes }),
  },
  { weight: 1, arbitrary: fc.record({ op: fc.constant('append' as const), bytes: smallBytes }) },
);

/** A sequence id: mostly the right one, sometimes anything. */
const sequenceId = (right: number): fc.Arbitrary<number> =>
  fc.oneof({ weight: 9, arbitrary: fc.constant(right) }, { weight: 1, arbitrary: fc.nat(255) });

function templatePacket(templates: number, seq: number): fc.Arbitrary<PacketSpec> {
  return fc.record({
    kind: fc.constant('template' as const),
    template: fc.nat(templates - 1),
    mutations: fc.oneof(
      { weight: 5, arbitrary: fc.constant<Mutation[]>([]) },
      { weight: 5, arbitrary: fc.array(mutation, { minLength: 1, maxLength: 3 }) },
    ),
    seq: sequenceId(seq),
    lengthDelta: fc.oneof(
      { weight: 19, arbitrary: fc.constant(0) },
      { weight: 1, arbitrary: fc.integer({ min: -8, max: 8 }) },
    ),
  });
}

function packet(templates: number, seq: number, long: boolean): fc.Arbitrary<PacketSpec> {
  const arbitraries: Array<fc.WeightedArbitrary<PacketSpec>> = [
    { weight: 70_000, arbitrary: templatePacket(templates, seq) },
    {
      weight: 12_000,
      arbitrary: fc.record({
        kind: fc.constant('random' as const),
        command: fc.oneof(fc.nat(0x1f), fc.nat(255)),
        body: fc.uint8Array({ maxLength: 64 }),
        seq: sequenceId(seq),
      }),
    },
    {
      weight: 3_000,
      arbitrary: fc.record({ kind: fc.constant('empty' as const), seq: sequenceId(seq) }),
    },
    {
      weight: 4_000,
      arbitrary: fc.record({
        kind: fc.constant('raw' as const),
        bytes: fc.uint8Array({ minLength: 1, maxLength: 48 }),
      }),
    },
  ];
  if (long) {
    arbitraries.push({
      // About one packet in 22 000: each is 16 MB through the proxy and the server.
      weight: 4,
      arbitrary: fc.record({
        kind: fc.constant('long' as const),
        extra: fc.nat(64),
        continuationSeq: fc.oneof(
          { weight: 3, arbitrary: fc.constant(null) },
          { weight: 1, arbitrary: fc.nat(255) },
        ),
      }),
    });
  }
  return fc.oneof(...arbitraries);
}

const splits = fc.array(fraction, { maxLength: 6 });
/** Mostly null: a stream cut short is a case of its own, not the rule. */
const truncateAt = fc.oneof(
  { weight: 11, arbitrary: fc.constant(null) },
  { weight: 1, arbitrary: fraction },
);

/** A slow read every lane sends (a miss takes milliseconds), and a write that invalidates it. */
export const SLOW_READ = 0;
export const INVALIDATE_SLOW_READ = 1;

/**
 * A slow read every lane sends, intact, with a few packets pipelined behind it: when another
 * connection of the same worker has the same miss on its way, this one waits for it (single
 * flight), and what is queued behind it is taken up when the wait ends.
 */
function behindSharedMiss(templates: number, long: boolean): fc.Arbitrary<PacketSpec[]> {
  return fc
    .array(packet(templates, 0, long), { minLength: 1, maxLength: 4 })
    .map((rest) => [
      { kind: 'template' as const, template: SLOW_READ, mutations: [], seq: 0, lengthDelta: 0 },
      ...rest,
    ]);
}

/** Cases for a logged-in connection: a pipelined batch of commands. */
export function commandCase(templates: number, long: boolean): fc.Arbitrary<CommandCase> {
  const batch = fc.record({
    phase: fc.constant('command' as const),
    packets: fc.array(packet(templates, 0, long), { minLength: 1, maxLength: 24 }),
    partner: fc.constant(false),
    splits,
    truncateAt,
  });
  const behindMiss = fc.record({
    phase: fc.constant('command' as const),
    packets: behindSharedMiss(templates, long),
    partner: fc.constant(true),
    splits,
    truncateAt: fc.constant(null),
  });
  return fc.oneof({ weight: 3, arbitrary: batch }, { weight: 1, arbitrary: behindMiss });
}

/** Cases instead of a login answer: the answer itself (template 0), mutated or replaced. */
export function loginCase(phase: 'handshake' | 'auth-switch'): fc.Arbitrary<LoginCase> {
  const seq = phase === 'handshake' ? 1 : 3;
  return fc.record({
    phase: fc.constant(phase),
    packets: fc
      .tuple(packet(1, seq, false), fc.array(packet(1, seq + 1, false), { maxLength: 2 }))
      .map(([first, rest]) => [first, ...rest]),
    splits,
    truncateAt,
  });
}

// --- encoding ----------------------------------------------------------------------------------

function mutate(payload: Buffer, mutations: readonly Mutation[]): Buffer {
  let out = Buffer.from(payload);
  for (const edit of mutations) {
    switch (edit.op) {
      case 'truncate':
        out = out.subarray(0, position(edit.at, out.length));
        break;
      case 'cut':
        out = out.subarray(0, Math.min(out.length, edit.keep));
        break;
      case 'flip': {
        if (out.length === 0) break;
        const at = Math.min(out.length - 1, position(edit.at, out.length - 1));
        out[at] = out[at]! ^ (1 << edit.bit);
        break;
      }
      case 'set': {
        if (out.length === 0) break;
        const at = Math.min(out.length - 1, position(edit.at, out.length - 1));
        out[at] = edit.value;
        break;
      }
      case 'insert': {
        const at = position(edit.at, out.length);
        out = Buffer.concat([out.subarray(0, at), edit.bytes, out.subarray(at)]);
        break;
      }
      case 'append':
        out = Buffer.concat([out, edit.bytes]);
        break;
    }
  }
  return out;
}

function header(length: number, seq: number): Buffer {
  const out = Buffer.alloc(4);
  out.writeUIntLE(length, 0, 3);
  out[3] = seq & 0xff;
  return out;
}

/** A statement long enough to need a continuation packet: `extra` bytes past 0xFFFFFF. */
function longPackets(spec: PacketSpec & { kind: 'long' }): Buffer {
  const prefix = Buffer.from("\u0003SELECT LENGTH('", 'latin1');
  const suffix = Buffer.from("')", 'latin1');
  const total = MAX_PACKET_PAYLOAD + spec.extra;
  const payload = Buffer.alloc(total, 0x61);
  prefix.copy(payload, 0);
  suffix.copy(payload, total - suffix.length);
  const first = payload.subarray(0, MAX_PACKET_PAYLOAD);
  const rest = payload.subarray(MAX_PACKET_PAYLOAD);
  return Buffer.concat([
    header(MAX_PACKET_PAYLOAD, 0),
    first,
    header(rest.length, spec.continuationSeq ?? 1),
    rest,
  ]);
}

/** The bytes of one packet spec; `templates` are payloads without headers. */
export function encodeSpec(spec: PacketSpec, templates: readonly Buffer[]): Buffer {
  switch (spec.kind) {
    case 'template': {
      const payload = mutate(templates[spec.template]!, spec.mutations);
      const declared = Math.max(
        0,
        Math.min(MAX_PACKET_PAYLOAD - 1, payload.length + spec.lengthDelta),
      );
      return Buffer.concat([header(declared, spec.seq), payload]);
    }
    case 'random': {
      const payload = Buffer.concat([Buffer.from([spec.command]), spec.body]);
      return Buffer.concat([header(payload.length, spec.seq), payload]);
    }
    case 'empty':
      return header(0, spec.seq);
    case 'raw':
      return Buffer.from(spec.bytes);
    case 'long':
      return longPackets(spec);
  }
}

export interface EncodedCase {
  /** The pieces to write, in order, each with its own write call. */
  pieces: Buffer[];
  /** Physical packets the stream frames into (a partial last one included). */
  packets: number;
  /** The stream ends inside a packet: the server waits for the rest, legitimately. */
  partial: boolean;
  /**
   * The number of the compressed packet each piece goes in on a compressed connection, as the
   * server expects it: 0 for a piece read after a command ended (the server starts numbering
   * again when it begins the next, even inside a piece), else one more than the piece before.
   */
  compressedSequences: number[];
}

export function encodeCase(fuzz: FuzzCase, templates: readonly Buffer[]): EncodedCase {
  let stream = Buffer.concat(fuzz.packets.map((spec) => encodeSpec(spec, templates)));
  if (fuzz.truncateAt !== null)
    stream = stream.subarray(0, position(fuzz.truncateAt, stream.length));
  let packets = 0;
  const framer = new PacketFramer(() => packets++, 0);
  framer.push(stream);
  const partial = !framer.idle;
  if (partial) packets++;
  const cuts = [...new Set(fuzz.splits.map((at) => position(at, stream.length)))]
    .filter((at) => at > 0 && at < stream.length)
    .sort((a, b) => a - b);
  const pieces: Buffer[] = [];
  let from = 0;
  for (const cut of cuts) {
    pieces.push(stream.subarray(from, cut));
    from = cut;
  }
  pieces.push(stream.subarray(from));
  const written = pieces.filter((piece) => piece.length > 0);
  return { pieces: written, packets, partial, compressedSequences: sequencesOf(stream, written) };
}

/** EncodedCase.compressedSequences for `pieces` of `stream`. */
function sequencesOf(stream: Buffer, pieces: readonly Buffer[]): number[] {
  // Where commands end: after each packet shorter than the largest (the others continue).
  const ends: number[] = [];
  for (let at = 0; at + 4 <= stream.length;) {
    const length = stream.readUIntLE(at, 3);
    at += 4 + length;
    if (length < MAX_PACKET_PAYLOAD && at <= stream.length) ends.push(at);
  }
  const sequences: number[] = [];
  let start = 0;
  let previousStart = -1;
  for (const piece of pieces) {
    const restarts =
      sequences.length === 0 || ends.some((end) => end > previousStart && end <= start);
    sequences.push(restarts ? 0 : (sequences.at(-1)! + 1) & 0xff);
    previousStart = start;
    start += piece.length;
  }
  return sequences;
}

/** A case as text, to print as a reproducer. */
export function describeCase(fuzz: FuzzCase, templates: readonly Buffer[]): string {
  const encoded = encodeCase(fuzz, templates);
  const bytes = Buffer.concat(encoded.pieces);
  const shown =
    bytes.length > 512 ? `${bytes.subarray(0, 512).toString('hex')}…` : bytes.toString('hex');
  const partner =
    fuzz.phase === 'command' && fuzz.partner
      ? " behind a partner connection's miss of the slow read"
      : '';
  return `${fuzz.phase}${partner}: ${encoded.packets} packet(s)${encoded.partial ? ', last one partial' : ''}, ${bytes.length} bytes, written in ${encoded.pieces.length} piece(s) of ${encoded.pieces.map((piece) => piece.length).join('+')}: ${shown}`;
}

// --- templates -----------------------------------------------------------------------------------

function query(sql: string): Buffer {
  return Buffer.concat([Buffer.from([Command.QUERY]), Buffer.from(sql, 'utf8')]);
}

function simple(command: number, body = ''): Buffer {
  return Buffer.concat([Buffer.from([command]), Buffer.from(body, 'latin1')]);
}

/**
 * What a real client sends once logged in, for fuzz connection `lane`. Writes touch only the
 * lane's own rows (no lock waits between lanes); reads are shared by every lane, so identical
 * misses meet in one worker's single flight. Statement ids 1-3 are what the server hands out
 * to the first prepares on a connection; others are bogus.
 */
export function commandTemplates(lane: number): Buffer[] {
  const own = 10 + lane;
  const ids = [1, 2, 3, 0, 0x7fffffff, 0xffffffff];
  const params: Param[][] = [[], [1], [2], [null], ['x'], [1, 2], [Buffer.from([0xff, 0])]];
  // SLOW_READ, then INVALIDATE_SLOW_READ: see behindSharedMiss.
  const sharedReads = [
    query(`SELECT SUM(v) FROM ${FUZZ_DB}.big WHERE id > 0`),
    // Invalidates the slow reads, so they miss again.
    query(`UPDATE ${FUZZ_DB}.big SET v = v + 1 WHERE id = ${own}`),
    query(`SELECT SUM(v) FROM ${FUZZ_DB}.big WHERE id > 1`),
    query(`SELECT COUNT(*), MAX(v) FROM ${FUZZ_DB}.big`),
    query(`SELECT v FROM ${FUZZ_DB}.t WHERE id = 1`),
    query(`SELECT v FROM ${FUZZ_DB}.t WHERE id = 2`),
    query(`SELECT * FROM ${FUZZ_DB}.t ORDER BY id LIMIT 3`),
  ];
  const templates: Buffer[] = [
    ...sharedReads,
    query(`/* app */ SELECT v FROM ${FUZZ_DB}.t WHERE id = 1`),
    query(`UPDATE ${FUZZ_DB}.t SET v = v + 1 WHERE id = ${own}`),
    query('BEGIN'),
    query('COMMIT'),
    query('ROLLBACK'),
    query('SET autocommit = 0'),
    query('SET autocommit = 1'),
    query('SELECT FOUND_ROWS()'),
    query('SHOW WARNINGS'),
    query("SHOW GLOBAL STATUS LIKE 'Qcache_hits'"),
    query('SET SESSION query_cache_type = 2'),
    query(`SELECT SQL_CACHE v FROM ${FUZZ_DB}.t WHERE id = 1`),
    query('SELECT 1; SELECT 2'),
    query(`SELECT v FROM ${FUZZ_DB}.t WHERE id = ${own} FOR UPDATE`),
    query("SELECT 'x' AS a, NULL AS b"),
    prepare(`SELECT v FROM ${FUZZ_DB}.t WHERE id = ?`),
    prepare(`SELECT SUM(v) FROM ${FUZZ_DB}.big WHERE id > ?`),
    prepare(`UPDATE ${FUZZ_DB}.t SET v = ? WHERE id = ${own}`),
    simple(Command.PING),
    simple(Command.STATISTICS),
    simple(Command.INIT_DB, FUZZ_DB),
    simple(Command.FIELD_LIST, 't\u0000'),
    Buffer.from([Command.SET_OPTION, 0, 0]),
    Buffer.from([Command.SET_OPTION, 1, 0]),
    simple(Command.RESET_CONNECTION),
    simple(Command.PROCESS_INFO),
  ];
  for (const id of ids) {
    for (const values of params) templates.push(execute(id, values));
    templates.push(execute(id, [1], true));
    templates.push(fetch(id, 2));
    templates.push(statementCommand(Command.STMT_CLOSE, id));
    templates.push(statementCommand(Command.STMT_RESET, id));
    templates.push(sendLongData(id, 0, Buffer.from('long')));
  }
  // Shared reads as often as all prepared-statement commands together: misses that meet.
  for (let i = 0; i < 8; i++) templates.push(...sharedReads);
  return templates;
}
