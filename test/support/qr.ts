// A QR code drawn by qrCodeSvg (src/http/routes/spamblocker-routes.ts: one `M x y h n v1 h-n z`
// rectangle per run of dark modules in a row) read back as an image of `scale` pixels per module
// and decoded by a QR reader (jsQR), so that a test decodes what the page shows rather than
// trusting the encoder.
import jsQRModule from 'jsqr';

/** jsQR is CommonJS whose exported function also carries itself as `default`, which its types describe. */
const jsQR = jsQRModule.default;

export function decodeQrSvg(svg: string, scale = 4): string | undefined {
  const side = Number(/viewBox="0 0 (\d+) (\d+)"/.exec(svg)?.[1]);
  const width = side * scale;
  const pixels = new Uint8ClampedArray(width * width * 4).fill(255);
  for (const [, x, y, length] of svg.matchAll(/M(\d+) (\d+)h(\d+)v1h-\3z/g)) {
    for (let module = 0; module < Number(length); module += 1) {
      for (let row = 0; row < scale; row += 1) {
        for (let column = 0; column < scale; column += 1) {
          const offset = ((Number(y) * scale + row) * width + (Number(x) + module) * scale + column) * 4;
          pixels[offset] = 0;
          pixels[offset + 1] = 0;
          pixels[offset + 2] = 0;
        }
      }
    }
  }
  return jsQR(pixels, width, width)?.data;
}
