import { createHash } from 'node:crypto';
import { brotliDecompressSync, gunzipSync } from 'node:zlib';
import Fastify from 'fastify';
import { afterAll, describe, expect, it } from 'vitest';
import {
  chooseVariant,
  compressDynamic,
  COMPRESSION_THRESHOLD_BYTES,
  negotiateEncoding,
  precompress,
  varyOnAcceptEncoding,
} from './encoding.js';

describe('negotiateEncoding', () => {
  it('sends identity when the client sends no Accept-Encoding, or an empty one', () => {
    expect(negotiateEncoding(undefined)).toBeUndefined();
    expect(negotiateEncoding('')).toBeUndefined();
  });

  it('prefers brotli over gzip at equal q, as browsers send them', () => {
    expect(negotiateEncoding('gzip, deflate, br')).toBe('br');
    expect(negotiateEncoding('gzip, deflate, br, zstd')).toBe('br');
    expect(negotiateEncoding('br;q=0.5, gzip;q=0.5')).toBe('br');
  });

  it('follows the q-values when they differ', () => {
    expect(negotiateEncoding('br;q=0.5, gzip')).toBe('gzip');
    expect(negotiateEncoding('br;q=0.9, gzip;q=0.8')).toBe('br');
    expect(negotiateEncoding('gzip;q=0.001, br;q=0.002')).toBe('br');
  });

  it('never sends a coding given q=0', () => {
    expect(negotiateEncoding('br;q=0, gzip')).toBe('gzip');
    expect(negotiateEncoding('br;q=0')).toBeUndefined();
    expect(negotiateEncoding('br;q=0.000, gzip;q=0')).toBeUndefined();
  });

  it('reads * as every coding not named, and a named coding over *', () => {
    expect(negotiateEncoding('*')).toBe('br');
    expect(negotiateEncoding('*;q=0.5, br;q=0')).toBe('gzip');
    expect(negotiateEncoding('gzip;q=0.4, *;q=0.8')).toBe('br');
    expect(negotiateEncoding('*;q=0')).toBeUndefined();
  });

  it('reads codings and the q parameter case-insensitively, x-gzip as gzip', () => {
    expect(negotiateEncoding('GZIP')).toBe('gzip');
    expect(negotiateEncoding('Br;Q=1, gzip;q=0.5')).toBe('br');
    expect(negotiateEncoding('x-gzip')).toBe('gzip');
  });

  it('sends identity when the client prefers it, and still sends something when it refuses everything', () => {
    expect(negotiateEncoding('identity, gzip;q=0.5')).toBeUndefined();
    expect(negotiateEncoding('gzip;q=0.5, identity;q=0.2')).toBe('gzip');
    expect(negotiateEncoding('identity;q=0')).toBeUndefined();
    expect(negotiateEncoding('identity')).toBeUndefined();
    expect(negotiateEncoding('deflate')).toBeUndefined();
  });

  it('skips an element with a malformed q and keeps the others', () => {
    expect(negotiateEncoding('br;q=2, gzip')).toBe('gzip');
    expect(negotiateEncoding('br;q=abc')).toBeUndefined();
    expect(negotiateEncoding('br;q=0.12345, gzip;q=0.1')).toBe('gzip');
    expect(negotiateEncoding(' , ;;, gzip ; q = 0.7 ')).toBe('gzip');
  });

  it('chooses only among the codings on offer', () => {
    expect(negotiateEncoding('gzip, br', ['gzip'])).toBe('gzip');
    expect(negotiateEncoding('br', ['gzip'])).toBeUndefined();
    expect(negotiateEncoding('gzip, br', [])).toBeUndefined();
  });

  it('gives the same answers for a header seen many times and for more distinct headers than it keeps', () => {
    for (let round = 0; round < 3; round += 1) {
      for (let index = 0; index < 200; index += 1) {
        expect(
          negotiateEncoding(
            `gzip;q=0.${String((index % 9) + 1)}, br;q=0.${String(((index + 4) % 9) + 1)}, x-${String(index)}`,
          ),
        ).toBe((index + 4) % 9 >= index % 9 ? 'br' : 'gzip');
      }
    }
    expect(negotiateEncoding(`${'x'.repeat(500)}, gzip`)).toBe('gzip');
  });
});

const LARGE = Buffer.from(
  Array.from({ length: 400 }, (_, index) => `line ${String(index)} of a compressible text\n`).join(''),
  'utf8',
);

describe('precompress', () => {
  it('makes brotli and gzip forms that decode to the body, smaller than it', async () => {
    const variants = await precompress(LARGE);
    expect(variants.identity).toBe(LARGE);
    expect(brotliDecompressSync(variants.br ?? Buffer.alloc(0)).equals(LARGE)).toBe(true);
    expect(gunzipSync(variants.gzip ?? Buffer.alloc(0)).equals(LARGE)).toBe(true);
    expect(variants.br?.length ?? Infinity).toBeLessThan(LARGE.length);
    expect(variants.gzip?.length ?? Infinity).toBeLessThan(LARGE.length);
  });

  it('leaves a body under the threshold as it is', async () => {
    const small = Buffer.alloc(COMPRESSION_THRESHOLD_BYTES - 1, 'a');
    expect(await precompress(small)).toEqual({ identity: small });
  });

  it('drops a form that is no smaller than the body', async () => {
    // SHA-256 in counter mode: fixed bytes that no coding can shrink.
    const noise = Buffer.concat(
      Array.from({ length: 128 }, (_, index) => createHash('sha256').update(String(index)).digest()),
    );
    expect(await precompress(noise)).toEqual({ identity: noise });
  });
});

describe('compressDynamic', () => {
  it('gzips a large body for a client that accepts gzip, even when it prefers brotli', async () => {
    const { body, coding } = await compressDynamic('br, gzip', LARGE);
    expect(coding).toBe('gzip');
    expect(gunzipSync(body).equals(LARGE)).toBe(true);
  });

  it('sends a small body, or one to a client without gzip, as it is', async () => {
    expect(await compressDynamic('gzip', Buffer.from('short'))).toEqual({ body: Buffer.from('short') });
    expect(await compressDynamic('br', LARGE)).toEqual({ body: LARGE });
    expect(await compressDynamic(undefined, LARGE)).toEqual({ body: LARGE });
  });
});

describe('sending a variant', () => {
  const app = Fastify();
  afterAll(() => app.close());

  it('sets Content-Encoding, Content-Length of the bytes sent, and adds Accept-Encoding to an existing Vary', async () => {
    const variants = await precompress(LARGE);
    app.get('/variant', async (request, reply) => {
      reply.header('Vary', 'Origin');
      return reply.type('text/plain').send(chooseVariant(request.headers['accept-encoding'], reply, variants));
    });
    app.get('/vary-twice', async (_request, reply) => {
      varyOnAcceptEncoding(reply);
      varyOnAcceptEncoding(reply);
      return 'ok';
    });
    const br = await app.inject({ url: '/variant', headers: { 'accept-encoding': 'gzip, br' } });
    expect(br.headers['content-encoding']).toBe('br');
    expect(br.headers['content-length']).toBe(String(variants.br?.length));
    expect(br.headers.vary).toBe('Origin, Accept-Encoding');
    expect(brotliDecompressSync(br.rawPayload).equals(LARGE)).toBe(true);

    const plain = await app.inject({ url: '/variant' });
    expect(plain.headers['content-encoding']).toBeUndefined();
    expect(plain.headers['content-length']).toBe(String(LARGE.length));
    expect(plain.headers.vary).toBe('Origin, Accept-Encoding');
    expect(plain.rawPayload.equals(LARGE)).toBe(true);

    expect((await app.inject({ url: '/vary-twice' })).headers.vary).toBe('Accept-Encoding');
  });
});
