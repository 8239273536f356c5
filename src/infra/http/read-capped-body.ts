// Reading a fetch() answer's body with a byte cap applied as the bytes arrive, so that a server
// streaming without end costs at most the cap in memory (the CLI's remote answers, ARCEP files).

/** The body's bytes, or undefined as soon as more than `maxBytes` arrived (the rest is cancelled). */
export async function readCappedBody(response: Response, maxBytes: number): Promise<Buffer | undefined> {
  if (response.body === null) return Buffer.alloc(0);
  const reader = response.body.getReader();
  const chunks: Uint8Array[] = [];
  let size = 0;
  for (;;) {
    const { done, value } = await reader.read();
    if (done) break;
    size += value.byteLength;
    if (size > maxBytes) {
      await reader.cancel();
      return undefined;
    }
    chunks.push(value);
  }
  return Buffer.concat(chunks, size);
}
