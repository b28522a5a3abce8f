/**
 * A prepared statement bounded to one row by one of its parameters (`SELECT … WHERE id = ?`,
 * `UPDATE … WHERE id = ?`, `INSERT … (id, …) VALUES (?, …)`): each execution binds its own
 * value, so its slots are worked out per execution, from what the statement's table comes to
 * under the metadata loaded now (worked out once per load) and the value's digits (no string is
 * made). A text's literal value is the memo's business instead (statement-memo.ts).
 */
import type { StatementInfo } from '../sql/statement-info.ts';
import type { PointRead } from './schema-catalog.ts';

export class ParameterPoint {
  /** The metadata load and schema `target` was worked out for (-1: not yet). */
  generation = -1;
  schema: string | null = null;
  /** The catalog's point read (a SELECT) or point write; null when none under this load. */
  target: PointRead | null = null;
  /** Which parameter binds the point column; -1 when a literal does (or there is no target). */
  parameter = -1;
  /**
   * A read's slots for the execution being routed, [table, row]: rewritten by each execution,
   * so a result stored with them gets a copy.
   */
  readonly readSlots = new Int32Array(2);

  /** readSlots for an execution bounded to the row whose slot is `row`. */
  readSlotsOf(row: number): Int32Array {
    this.readSlots[0] = this.target!.tableSlot;
    this.readSlots[1] = row;
    return this.readSlots;
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
