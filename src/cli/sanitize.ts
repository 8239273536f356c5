// Text from elsewhere (scraped comments, a remote server's answer) made safe for a terminal.

/** Control characters (C0, DEL, C1) and bidi overrides out, line breaks folded: safe to print. */
export function sanitizeForTerminal(text: string): string {
  return text
    .replace(/[\r\n\t]+/g, ' ')
    // eslint-disable-next-line no-control-regex -- matching control characters is the point
    .replace(/[\u0000-\u001f\u007f-\u009f\u200e\u200f\u202a-\u202e\u2066-\u2069]/g, '')
    .trim();
}
