/**
 * Whether a statement's text tokenizes the same under every session state: only ASCII bytes (a
 * multi-byte character of big5, gbk or sjis can end in a backslash or quote byte), no backslash
 * (NO_BACKSLASH_ESCAPES decides whether it escapes) and no double quote (ANSI_QUOTES decides
 * whether it starts an identifier or a string). Such a text means the same statements, tables and
 * functions whatever sql_mode and character set the session has switched to.
 */
import { BACKSLASH, DOUBLE_QUOTE } from './char-codes.ts';

export function tokenizesTheSameInEveryMode(sql: string): boolean {
  for (let i = 0; i < sql.length; i++) {
    const code = sql.charCodeAt(i);
    if (code >= 0x80 || code === BACKSLASH || code === DOUBLE_QUOTE) return false;
  }
  return true;
}
