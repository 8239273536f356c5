// Text from elsewhere (scraped comments, a remote server's answer) made safe for a terminal.

/** Control characters (C0, DEL, C1) and bidi overrides out, line breaks folded: safe to print. */
export function sanitizeForTerminal(text: string): string {
  return (
    text
      .replace(/[\r\n\t]+/g, ' ')
      // eslint-disable-next-line no-control-regex -- matching control characters is the point
      .replace(/[\u0000-\u001f\u007f-\u009f\u200e\u200f\u202a-\u202e\u2066-\u2069]/g, '')
      .trim()
  );
}

/** Characters a terminal acts on (C0 but the line break, DEL, C1, bidi controls): a whole output line or block made safe. */
// eslint-disable-next-line no-control-regex -- matching control characters is the point
const TERMINAL_CONTROLS = /[\u0000-\u0009\u000b-\u001f\u007f-\u009f\u200e\u200f\u202a-\u202e\u2066-\u2069]/g;

/** Output text with every control character but `\n` removed: the last guard before a terminal. */
export function stripControls(text: string): string {
  return text.replace(TERMINAL_CONTROLS, '');
}

const JSON_RAW_CONTROLS = /[\u007f-\u009f\u200e\u200f\u2028\u2029\u202a-\u202e\u2066-\u2069]/g;

/**
 * A value as one line of JSON that a terminal cannot act on: JSON.stringify escapes C0
 * controls but leaves DEL, C1 (a one-byte CSI) and bidi controls raw; they are written as
 * \u escapes here, so the JSON holds the same value.
 */
export function terminalSafeJson(value: unknown): string {
  return JSON.stringify(value).replace(
    JSON_RAW_CONTROLS,
    (character) => `\\u${character.charCodeAt(0).toString(16).padStart(4, '0')}`,
  );
}
