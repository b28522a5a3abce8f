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
