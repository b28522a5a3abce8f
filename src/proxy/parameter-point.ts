/**
 * A prepared statement bounded to rows by its parameters (`SELECT … WHERE id = ?`, `… WHERE id IN
 * (?, ?, ?)`, `UPDATE … WHERE id = ?`, `INSERT … (id, …) VALUES (?, …)`): each execution binds its
 * own values, so its slots are worked out per execution, from what the statement's table comes
 * to under the metadata loaded now (worked out once per load) and the values' digits (no string
 * is made). A text's literal values are the memo's business instead (statement-memo.ts).
 */
import { KeyKind, keyValueOf } from '../sql/point-access.ts';
import type { StatementInfo } from '../sql/statement-info.ts';
import type { PointRead } from './schema-catalog.ts';

const NO_PARAMETERS = new Int32Array(0);

export class ParameterPoint {
  /** The metadata load and schema `target` was worked out for (-1: not yet). */
  generation = -1;
  schema: string | null = null;
  /** The catalog's point read (a SELECT) or point write; null when none under this load. */
  target: PointRead | null = null;
  /**
   * Which parameter binds each of the target's candidates, in their order, -1 where the text
   * gives a literal (`literals`); empty when no parameter binds one of them (the statement's
   * own slots then stand), or there is no target.
   */
  parameters: Int32Array = NO_PARAMETERS;
  /**
   * The literal value of each candidate of an integer column the text gives one (NaN where a
   * parameter binds it, or the literal names no row).
   */
  literals: Float64Array = new Float64Array(0);
  /**
   * The row name (keyValueOf) of each candidate of a column of strings or bytes the text gives
   * a literal; null elsewhere, and where the literal names no row.
   */
  literalTexts: Array<string | null> = [];
  /** The literal value of those candidates as written (PointCandidate.value), null elsewhere. */
  literalSpellings: Array<string | null> = [];
  /**
   * Where the execution being routed has each column of strings' or bytes' bound value in its
   * packet (`textStarts` -1 for a literal): its values as the client wrote them, to count the
   * distinct ones.
   */
  textStarts: Int32Array = NO_PARAMETERS;
  textEnds: Int32Array = NO_PARAMETERS;
  /**
   * The execution being routed: the slots of its rows, one per candidate (one in all for a key
   * of several columns), and how many distinct values they are. Rewritten by each execution, as
   * are the slots below: a result stored with them, or a write's marks, get a copy.
   */
  rows: Int32Array = NO_PARAMETERS;
  /** Its values, one per candidate (to count the distinct ones). */
  values: Float64Array = new Float64Array(0);
  keys = 0;
  /** A read's slots, [table, its rows…]. */
  #readSlots: Int32Array = NO_PARAMETERS;

  /** Worked out for `target`, the catalog's point read or write of `info` under this load. */
  bind(target: PointRead | null, info: StatementInfo): void {
    const parameters = parametersOf(target, info);
    this.target = target;
    this.parameters = parameters;
    this.literals = new Float64Array(parameters.length);
    this.literalTexts = [];
    this.literalSpellings = [];
    for (let i = 0; i < parameters.length; i++) {
      const value = info.point!.candidates[target!.candidates[i]!]!.value;
      const kind = target!.kinds[i]!;
      const text = kind !== KeyKind.INTEGER;
      const row = value === null ? null : keyValueOf(value, kind, target!.max[i]!);
      this.literals[i] = row === null || text ? NaN : Number(row);
      this.literalTexts.push(text ? row : null);
      this.literalSpellings.push(text ? value : null);
    }
    const rows =
      target !== null && target.width > 1 && parameters.length > 0 ? 1 : parameters.length;
    if (this.rows.length !== rows || this.values.length !== parameters.length) {
      this.rows = new Int32Array(rows);
      this.values = new Float64Array(parameters.length);
      this.textStarts = new Int32Array(parameters.length);
      this.textEnds = new Int32Array(parameters.length);
      this.#readSlots = new Int32Array(1 + rows);
    }
  }

  /**
   * Whether candidate `i`'s value (of a column of strings or bytes), as written, is one of the
   * candidates' before it in the execution being routed (`payload`): the same literal, or a
   * parameter of the same bytes. Values written alike name one row; values written otherwise
   * may too (`'abc'`, `'ABC'` in a string column; `'ab'`, `X'6162'` in one of bytes), and are
   * counted apart, which only makes a result that found fewer rows than values depend on "new
   * rows".
   */
  textSeenBefore(i: number, payload: Buffer): boolean {
    const starts = this.textStarts;
    const ends = this.textEnds;
    for (let j = 0; j < i; j++) {
      if (starts[i]! < 0 || starts[j]! < 0) {
        if (
          starts[i]! < 0 &&
          starts[j]! < 0 &&
          this.literalSpellings[i] === this.literalSpellings[j]
        )
          return true;
        continue;
      }
      const length = ends[i]! - starts[i]!;
      if (ends[j]! - starts[j]! !== length) continue;
      let same = true;
      for (let at = 0; at < length && same; at++) {
        same = payload[starts[i]! + at] === payload[starts[j]! + at];
      }
      if (same) return true;
    }
    return false;
  }

  /** The read slots of the execution whose rows were just set. */
  readSlots(): Int32Array {
    const slots = this.#readSlots;
    slots[0] = this.target!.tableSlot;
    slots.set(this.rows, 1);
    return slots;
  }

  /**
   * What a write's execution marks: the table's "some row", its rows, and the other tables it
   * writes whole (its triggers', its cascades'): a new array.
   */
  writeSlots(): Int32Array {
    const target = this.target!;
    const slots = new Int32Array(1 + this.rows.length + target.alsoWrites.length);
    slots[0] = target.someRowSlot;
    slots.set(this.rows, 1);
    slots.set(target.alsoWrites, 1 + this.rows.length);
    return slots;
  }

  /** One for a statement some of whose point candidates are parameters; null otherwise. */
  static of(info: StatementInfo): ParameterPoint | null {
    const point = info.point;
    if (point === null) return null;
    for (const candidate of point.candidates) {
      if (candidate.parameter >= 0) return new ParameterPoint();
    }
    return null;
  }
}

/**
 * Which parameter binds each of `target`'s candidates, in their order, -1 for a literal
 * (`IN (1, ?)`, `WHERE tenant = 7 AND id = ?`: each execution's rows are the literal's and its
 * parameters'); empty when there is no target or no parameter binds any (the statement's own
 * slots stand for every execution).
 */
function parametersOf(target: PointRead | null, info: StatementInfo): Int32Array {
  if (target === null) return NO_PARAMETERS;
  const candidates = info.point!.candidates;
  const parameters = new Int32Array(target.candidates.length);
  let bound = false;
  for (let i = 0; i < parameters.length; i++) {
    const parameter = candidates[target.candidates[i]!]!.parameter;
    parameters[i] = parameter;
    if (parameter >= 0) bound = true;
  }
  return bound ? parameters : NO_PARAMETERS;
}
