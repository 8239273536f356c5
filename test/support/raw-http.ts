// HTTP/1.1 over a bare TCP socket, for requests no client library sends (absolute-form request
// lines, duplicate or missing Host, bodies on GET, unknown methods) and for reading exactly
// what the server wrote back.
import net from 'node:net';

export interface RawAnswer {
  status: number;
  headers: Record<string, string>;
  body: string;
  /** Everything received, head included. */
  raw: string;
}

export function parseRawAnswer(raw: string): RawAnswer {
  const split = raw.indexOf('\r\n\r\n');
  const head = split === -1 ? raw : raw.slice(0, split);
  const [statusLine = '', ...lines] = head.split('\r\n');
  const headers: Record<string, string> = {};
  for (const line of lines) {
    const colon = line.indexOf(':');
    if (colon > 0) headers[line.slice(0, colon).toLowerCase()] = line.slice(colon + 1).trim();
  }
  return { status: Number(/^HTTP\/1\.[01] (\d{3})/.exec(statusLine)?.[1] ?? 0), headers, body: split === -1 ? '' : raw.slice(split + 4), raw };
}

/**
 * Writes `request` (text or chunks), then reads until the server closes the connection. Meant
 * for requests answered with `Connection: close` (or sent with it).
 */
export function rawExchange(port: number, request: string | Buffer, options: { localAddress?: string } = {}): Promise<RawAnswer> {
  return new Promise((resolve, reject) => {
    const chunks: Buffer[] = [];
    const socket = net.connect({ port, host: '127.0.0.1', ...(options.localAddress ? { localAddress: options.localAddress } : {}) }, () => {
      socket.write(request);
    });
    socket.on('data', (chunk: Buffer) => chunks.push(chunk));
    // The server may close while we still write (a refused body): what it sent is the answer.
    socket.on('error', (error: NodeJS.ErrnoException) => {
      if (chunks.length > 0 || error.code === 'ECONNRESET' || error.code === 'EPIPE') resolve(parseRawAnswer(Buffer.concat(chunks).toString('latin1')));
      else reject(error);
    });
    socket.on('close', () => resolve(parseRawAnswer(Buffer.concat(chunks).toString('latin1'))));
  });
}
