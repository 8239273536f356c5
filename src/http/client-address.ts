// Which bucket a client's requests count against. The address itself comes from Fastify's
// `request.ip`, which honours TRUST_PROXY (the first untrusted X-Forwarded-For hop, or the
// socket address when no proxy is trusted).
import net from 'node:net';

/**
 * IPv4 as is; IPv4-mapped IPv6 (::ffff:1.2.3.4) as the IPv4; other IPv6 by its /64, since
 * one subscriber usually holds a whole /64 and could otherwise rotate addresses freely.
 * Some balancers write forwarded entries as `ip:port` (`1.2.3.4:5678`, `[2001:db8::1]:443`):
 * the port is dropped. Anything else that is not an address counts as the socket's address
 * (`fallback`), so an unparseable entry never lands in a bucket shared with other clients.
 */
export function clientBucket(address: string | undefined, fallback?: string): string {
  const bucket = addressBucket(address);
  if (bucket !== undefined) return bucket;
  return (fallback === undefined ? undefined : addressBucket(fallback)) ?? 'unknown';
}

function addressBucket(address: string | undefined): string | undefined {
  if (!address) return undefined;
  const withPort = /^(\d+\.\d+\.\d+\.\d+):\d{1,5}$/.exec(address) ?? /^\[([^\]]+)\]:\d{1,5}$/.exec(address);
  const bare = (withPort?.[1] ?? address).replace(/^\[|\]$/g, '').replace(/%.*$/, '');
  const mapped = /^::ffff:(\d+\.\d+\.\d+\.\d+)$/i.exec(bare);
  if (mapped?.[1]) return mapped[1];
  if (net.isIPv4(bare)) return bare;
  if (!net.isIPv6(bare)) return undefined;
  return `${expandIPv6(bare).slice(0, 4).join(':')}::/64`;
}

function expandIPv6(address: string): string[] {
  let text = address.toLowerCase();
  // An embedded IPv4 tail (::1.2.3.4) becomes two hextets.
  const v4 = /(\d+)\.(\d+)\.(\d+)\.(\d+)$/.exec(text);
  if (v4) {
    const [a, b, c, d] = v4.slice(1).map(Number) as [number, number, number, number];
    text = text.slice(0, v4.index) + `${((a << 8) | b).toString(16)}:${((c << 8) | d).toString(16)}`;
  }
  const [head = '', tail] = text.split('::');
  const headParts = head === '' ? [] : head.split(':');
  const tailParts = tail === undefined || tail === '' ? [] : tail.split(':');
  const missing = 8 - headParts.length - tailParts.length;
  const parts = tail === undefined ? headParts : [...headParts, ...Array<string>(Math.max(0, missing)).fill('0'), ...tailParts];
  return parts.map((part) => part.replace(/^0+(?=.)/, ''));
}
