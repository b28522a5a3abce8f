/** Character codes the tokenizer and the parsers compare against (they work on char codes, not strings). */
export const TAB = 9;
export const CARRIAGE_RETURN = 13;
export const SPACE = 32;
export const BANG = 33;
export const DOUBLE_QUOTE = 34;
export const HASH = 35;
export const DOLLAR = 36;
export const PERCENT = 37;
export const AMPERSAND = 38;
export const SINGLE_QUOTE = 39;
export const LEFT_PARENTHESIS = 40;
export const RIGHT_PARENTHESIS = 41;
export const STAR = 42;
export const PLUS = 43;
export const COMMA = 44;
export const MINUS = 45;
export const DOT = 46;
export const SLASH = 47;
export const DIGIT_0 = 48;
export const DIGIT_1 = 49;
export const DIGIT_9 = 57;
export const COLON = 58;
export const SEMICOLON = 59;
export const LESS = 60;
export const EQUALS = 61;
export const GREATER = 62;
export const QUESTION = 63;
export const AT = 64;
export const UPPER_A = 65;
export const UPPER_B = 66;
export const UPPER_E = 69;
export const UPPER_F = 70;
export const UPPER_M = 77;
export const UPPER_N = 78;
export const UPPER_X = 88;
export const UPPER_Z = 90;
export const BACKSLASH = 92;
export const CARET = 94;
export const UNDERSCORE = 95;
export const BACKTICK = 96;
export const LOWER_A = 97;
export const LOWER_B = 98;
export const LOWER_E = 101;
export const LOWER_F = 102;
export const LOWER_N = 110;
export const LOWER_X = 120;
export const LOWER_Z = 122;
export const PIPE = 124;
export const TILDE = 126;
export const DELETE_CHAR = 127;
export const FIRST_NON_ASCII = 128;

/** A decimal digit. */
export function isDigit(code: number): boolean {
  return code >= DIGIT_0 && code <= DIGIT_9;
}

/** A hex digit, in either letter case. */
export function isHexDigit(code: number): boolean {
  return (
    isDigit(code) || (code >= UPPER_A && code <= UPPER_F) || (code >= LOWER_A && code <= LOWER_F)
  );
}
