/**
 * Bounds-checked reads of the client command fields the proxy looks at. A client packet may be
 * cut anywhere: each reader says "not there" instead of throwing, and the caller decides what
 * the server would make of the packet.
 * @see https://mariadb.com/kb/en/com_stmt_execute/
 * @see https://mariadb.com/kb/en/com_stmt_send_long_data/
 */

/** COM_STMT_EXECUTE up to its parameters: command, statement id, flags, iteration count. */
export const EXECUTE_HEADER_LENGTH = 10;

/**
 * COM_STMT_SEND_LONG_DATA up to its data: command, statement id, parameter number. The server
 * ignores a shorter one without a reply ("Minimal size of long data packet is 6 bytes").
 */
export const LONG_DATA_HEADER_LENGTH = 7;

/** The statement id of a COM_STMT_* payload (command byte first), or -1 when it is cut short. */
export function statementIdOf(payload: Buffer): number {
  return payload.length >= 5 ? payload.readUInt32LE(1) : -1;
}

/**
 * Where the parts of a COM_STMT_EXECUTE with `parameterCount` parameters lie: the null bitmap
 * from EXECUTE_HEADER_LENGTH to `bitmapEnd`, the new-params-bound flag at `bitmapEnd`, the
 * types after it when the flag is 1, then the values from `valuesStart`.
 */
export interface ExecuteLayout {
  bitmapEnd: number;
  /** The packet carries the parameter types (new-params-bound flag not 0). */
  typesSent: boolean;
  valuesStart: number;
}

/**
 * The layout of an execute payload, or null when it is cut short before the values begin (the
 * server answers such a packet with 1835 and keeps the types it had). A statement without
 * parameters has no bitmap and no flag.
 */
export function executeLayoutOf(payload: Buffer, parameterCount: number): ExecuteLayout | null {
  if (parameterCount === 0) {
    return payload.length < EXECUTE_HEADER_LENGTH
      ? null
      : { bitmapEnd: EXECUTE_HEADER_LENGTH, typesSent: false, valuesStart: EXECUTE_HEADER_LENGTH };
  }
  const bitmapEnd = EXECUTE_HEADER_LENGTH + ((parameterCount + 7) >> 3);
  if (payload.length <= bitmapEnd) return null;
  // The server reads any byte but 0 as "types follow".
  const typesSent = payload[bitmapEnd] !== 0;
  const valuesStart = bitmapEnd + 1 + (typesSent ? 2 * parameterCount : 0);
  if (payload.length < valuesStart) return null;
  return { bitmapEnd, typesSent, valuesStart };
}

/**
 * The same execution with the parameter types in it: what a client that omitted them (new-params-
 * bound flag 0) means when the server never received the types it bound last.
 */
export function executeWithTypes(payload: Buffer, bitmapEnd: number, types: Buffer): Buffer {
  const out = Buffer.allocUnsafe(payload.length + types.length);
  payload.copy(out, 0, 0, bitmapEnd);
  out[bitmapEnd] = 1;
  types.copy(out, bitmapEnd + 1);
  payload.copy(out, bitmapEnd + 1 + types.length, bitmapEnd + 1);
  return out;
}
