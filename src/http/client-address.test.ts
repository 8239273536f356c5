import { describe, expect, it } from 'vitest';
import { BlockList } from 'node:net';
import { clientBucket, clientOf, isExempt } from './client-address.js';

describe('clientBucket', () => {
  it.each([
    ['203.0.113.7', '203.0.113.7'],
    ['::ffff:203.0.113.7', '203.0.113.7'],
    ['::FFFF:10.0.0.1', '10.0.0.1'],
    ['2001:db8:1:2:3:4:5:6', '2001:db8:1:2::/64'],
    ['2001:db8:1:2::99', '2001:db8:1:2::/64'],
    ['2001:0db8:0001:0002:ffff::1', '2001:db8:1:2::/64'],
    ['::1', '0:0:0:0::/64'],
    ['[2001:db8::1]', '2001:db8:0:0::/64'],
    ['fe80::1%eth0', 'fe80:0:0:0::/64'],
    [undefined, 'unknown'],
    ['not-an-address', 'unknown'],
    ['1.2.3.4:5678', '1.2.3.4'],
    ['[2001:db8::1]:443', '2001:db8:0:0::/64'],
  ])('buckets %s as %s', (address, bucket) => {
    expect(clientBucket(address)).toBe(bucket);
  });

  it('puts every address of one /64 in the same bucket and another /64 elsewhere', () => {
    expect(clientBucket('2001:db8:aa:bb::1')).toBe(clientBucket('2001:db8:aa:bb:ffff:ffff:ffff:ffff'));
    expect(clientBucket('2001:db8:aa:bb::1')).not.toBe(clientBucket('2001:db8:aa:bc::1'));
  });

  it('counts an unparseable forwarded entry as the socket address, never as a shared bucket', () => {
    expect(clientBucket('not-an-address', '198.51.100.4')).toBe('198.51.100.4');
    expect(clientBucket('1.2.3.4:port', '::ffff:198.51.100.5')).toBe('198.51.100.5');
    expect(clientBucket('1.2.3.4:5678', '198.51.100.4')).toBe('1.2.3.4');
  });
});

describe('clientOf: the one address the rate limit and RATE_LIMIT_EXEMPT read', () => {
  it.each([
    ['127.0.0.2:5060', '127.0.0.2'],
    ['::ffff:127.0.0.2', '127.0.0.2'],
    ['[2001:db8::1]:443', '2001:db8::1'],
    ['2001:db8::1', '2001:db8::1'],
  ])('reads %s as %s', (address, canonical) => {
    expect(clientOf(address)).toBe(canonical);
  });

  it('makes an exempt address behind a proxy that writes ip:port exempt, and its bucket the same as without the port', () => {
    const list = new BlockList();
    list.addAddress('127.0.0.2', 'ipv4');
    expect(isExempt(list, clientOf('127.0.0.2:5060'))).toBe(true);
    expect(isExempt(list, clientOf('127.0.0.3:5060'))).toBe(false);
    expect(clientBucket('127.0.0.2:5060')).toBe(clientBucket('127.0.0.2'));
  });
});
