/**
 * Table names in the one form the router and the schema metadata share: the bytes of the name as
 * a client whose character set is utf8 or utf8mb4 sends them, read as Latin-1 (one character per
 * byte), which is how the router reads statement bytes without decoding them. The metadata reads
 * names from information_schema as text, so it turns them into that form (catalogNameOf).
 *
 * A name outside ASCII in a statement is resolved only when the client's character set is utf8
 * or utf8mb4: the same bytes from a latin1 client name another table (é is one byte there, two
 * in UTF-8), which the metadata's form would then match wrongly. Nor under lower_case_table_names
 * 1 or 2: lowering bytes read as Latin-1 is not how the server lowers a UTF-8 name. Such a name is
 * marked unresolvable: it matches nothing in the metadata, so reads of it are not cached and
 * writes of it invalidate everything, and it is no sign that the metadata is out of date.
 */
import type { StatementInfo } from './statement-info.ts';
import type { LowerCaseTableNames, TableRef } from './table-ref.ts';

/**
 * How a session's statements spell non-ASCII names: UTF8MB4 (any UTF-8), UTF8MB3 (UTF-8 of at
 * most three bytes a character: four-byte sequences are not what the server reads them as), or
 * OTHER (no non-ASCII name is resolved).
 */
export const NameEncoding = { UTF8MB4: 0, UTF8MB3: 1, OTHER: 2 } as const;
export type NameEncoding = (typeof NameEncoding)[keyof typeof NameEncoding];

/** The encoding of a session whose character_set_client is `charset`. */
export function nameEncodingOf(charset: string): NameEncoding {
  switch (charset.toLowerCase()) {
    case 'utf8mb4':
      return NameEncoding.UTF8MB4;
    case 'utf8':
    case 'utf8mb3':
      return NameEncoding.UTF8MB3;
    default:
      return NameEncoding.OTHER;
  }
}

/**
 * Starts an unresolvable name: the server refuses U+0000 in identifiers, so no name the metadata
 * holds, and no resolvable name of a statement, starts with it.
 */
const UNRESOLVABLE = '\u0000';

export function isUnresolvableName(name: string): boolean {
  return name.charCodeAt(0) === 0;
}

/**
 * A stored routine's name in the one form the metadata and the router share: routine names
 * compare without regard to case on every server, whatever lower_case_table_names says, so it is
 * lowered; null outside ASCII (lowering bytes read as Latin-1 is not how the server lowers a
 * UTF-8 name) and for an unresolvable name: such a routine is never found.
 */
export function routineNameOf(name: string): string | null {
  if (name.length === 0 || isUnresolvableName(name) || !isAscii(name)) return null;
  return name.toLowerCase();
}

export function isAscii(text: string): boolean {
  for (let i = 0; i < text.length; i++) if (text.charCodeAt(i) >= 0x80) return false;
  return true;
}

/**
 * A name read from the server (as text) in the shared form, lowered per lower_case_table_names;
 * null when a statement's spelling of it could not be resolved (non-ASCII under lctn 1 or 2).
 */
export function catalogNameOf(
  name: string,
  lowerCaseTableNames: LowerCaseTableNames,
): string | null {
  if (isAscii(name)) return lowerCaseTableNames === 0 ? name : name.toLowerCase();
  if (lowerCaseTableNames !== 0) return null;
  return Buffer.from(name, 'utf8').toString('latin1');
}

/**
 * A name as a statement spells it (bytes read as Latin-1, already lowered per lctn), or the same
 * name marked unresolvable when the session's encoding and lctn do not let it be resolved.
 */
export function statementName(
  name: string,
  encoding: NameEncoding,
  lowerCaseTableNames: LowerCaseTableNames,
): string {
  if (isUnresolvableName(name) || resolvable(name, encoding, lowerCaseTableNames)) return name;
  return UNRESOLVABLE + name;
}

function resolvable(
  name: string,
  encoding: NameEncoding,
  lowerCaseTableNames: LowerCaseTableNames,
): boolean {
  let ascii = true;
  for (let i = 0; i < name.length; i++) {
    const byte = name.charCodeAt(i);
    if (byte < 0x80) continue;
    ascii = false;
    // The lead byte of a four-byte sequence.
    if (byte >= 0xf0 && encoding === NameEncoding.UTF8MB3) return false;
  }
  return ascii || (encoding !== NameEncoding.OTHER && lowerCaseTableNames === 0);
}

/**
 * `info` with every table name the session cannot resolve marked (the same object when there is
 * none). Computed once per text and session mode, in the statement memo.
 */
export function withResolvableNames(
  info: StatementInfo,
  encoding: NameEncoding,
  lowerCaseTableNames: LowerCaseTableNames,
): StatementInfo {
  if (
    allResolvable(info.reads, encoding, lowerCaseTableNames) &&
    allResolvable(info.writes, encoding, lowerCaseTableNames)
  ) {
    return info;
  }
  const mark = (table: TableRef): TableRef => ({
    schema:
      table.schema === null ? null : statementName(table.schema, encoding, lowerCaseTableNames),
    name: statementName(table.name, encoding, lowerCaseTableNames),
  });
  return { ...info, reads: info.reads.map(mark), writes: info.writes.map(mark) };
}

function allResolvable(
  tables: readonly TableRef[],
  encoding: NameEncoding,
  lowerCaseTableNames: LowerCaseTableNames,
): boolean {
  for (const table of tables) {
    if (table.schema !== null && !resolvable(table.schema, encoding, lowerCaseTableNames))
      return false;
    if (!resolvable(table.name, encoding, lowerCaseTableNames)) return false;
  }
  return true;
}
