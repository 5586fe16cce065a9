import { describe, expect, it } from 'vitest';
import { normalizeAddress, readProxyHeader, trustedProxyMatcher } from '../../src/lib/client-limits.ts';

/** PROXY protocol v2 header (HAProxy's specification §2.2): signature, command, family, addresses. */
function v2(command: number, family: number, addresses: Buffer): Buffer {
  const head = Buffer.alloc(16);
  Buffer.from('0d0a0d0a000d0a515549540a', 'hex').copy(head);
  head[12] = command;
  head[13] = family;
  head.writeUInt16BE(addresses.length, 14);
  return Buffer.concat([head, addresses]);
}

const IPV4_ADDRESSES = Buffer.from([198, 51, 100, 7, 10, 0, 0, 1, 0x9c, 0x40, 0x0f, 0xa0]);
const HTTP = Buffer.from('GET /health HTTP/1.1\r\n');

describe('readProxyHeader (issue 20, item 12)', () => {
  it('reads a v2 PROXY header over IPv4 and IPv6, and LOCAL without a client', () => {
    const ipv4 = v2(0x21, 0x11, IPV4_ADDRESSES);
    expect(readProxyHeader(Buffer.concat([ipv4, HTTP]))).toEqual({
      kind: 'header',
      client: '198.51.100.7',
      length: 28,
    });
    const ipv6 = Buffer.alloc(36);
    Buffer.from('20010db8000000000000000000000007', 'hex').copy(ipv6, 0);
    expect(readProxyHeader(v2(0x21, 0x21, ipv6))).toEqual({
      kind: 'header',
      client: '2001:db8:0:0:0:0:0:7',
      length: 52,
    });
    // TLVs after the addresses are skipped.
    const withTlv = v2(0x21, 0x11, Buffer.concat([IPV4_ADDRESSES, Buffer.from([0x04, 0x00, 0x01, 0xff])]));
    expect(readProxyHeader(withTlv)).toEqual({ kind: 'header', client: '198.51.100.7', length: 32 });
    expect(readProxyHeader(v2(0x20, 0x00, Buffer.alloc(0)))).toEqual({ kind: 'header', length: 16 });
  });

  it('reads a v1 line, and UNKNOWN without a client', () => {
    expect(readProxyHeader(Buffer.from('PROXY TCP4 198.51.100.7 10.0.0.1 40000 4000\r\nGET'))).toEqual({
      kind: 'header',
      client: '198.51.100.7',
      length: 45,
    });
    expect(readProxyHeader(Buffer.from('PROXY TCP6 2001:db8::7 2001:db8::1 40000 4000\r\n'))).toMatchObject({
      client: '2001:db8::7',
    });
    expect(readProxyHeader(Buffer.from('PROXY UNKNOWN\r\n'))).toEqual({ kind: 'header', length: 15 });
  });

  it('waits for the rest of a header cut anywhere', () => {
    const whole = v2(0x21, 0x11, IPV4_ADDRESSES);
    for (let cut = 1; cut < whole.length; cut++) {
      expect(readProxyHeader(whole.subarray(0, cut))).toEqual({ kind: 'incomplete' });
    }
    expect(readProxyHeader(Buffer.from('PROXY TCP4 198.51.100.7'))).toEqual({ kind: 'incomplete' });
  });

  it('refuses what is not a well-formed header', () => {
    const invalid = (data: Buffer | string) => readProxyHeader(Buffer.from(data)).kind;
    expect(invalid(HTTP)).toBe('invalid');
    expect(invalid('PROXY TCP4 198.51.100.7 10.0.0.1 40000\r\n')).toBe('invalid');
    expect(invalid('PROXY TCP4 2001:db8::7 10.0.0.1 40000 4000\r\n')).toBe('invalid');
    expect(invalid('PROXY TCP4 198.51.100.7 10.0.0.1 70000 4000\r\n')).toBe('invalid');
    expect(invalid(`PROXY ${'x'.repeat(120)}`)).toBe('invalid');
    expect(invalid(v2(0x11, 0x11, IPV4_ADDRESSES))).toBe('invalid');
    expect(invalid(v2(0x21, 0x31, Buffer.alloc(216)))).toBe('invalid');
    expect(invalid(v2(0x21, 0x11, Buffer.alloc(5000)))).toBe('invalid');
  });
});

describe('trustedProxyMatcher', () => {
  it('matches addresses and ranges, IPv4-mapped IPv6 peers included, and nothing when empty', () => {
    const trusted = trustedProxyMatcher(['10.0.0.5', '172.28.0.0/24', 'fd00::/64']);
    expect(['10.0.0.5', '::ffff:10.0.0.5', '172.28.0.200', 'fd00::9'].map(trusted)).toEqual([
      true,
      true,
      true,
      true,
    ]);
    expect(['10.0.0.6', '172.28.1.1', 'fd01::1', undefined].map(trusted)).toEqual([
      false,
      false,
      false,
      false,
    ]);
    expect(trustedProxyMatcher([])('10.0.0.5')).toBe(false);
  });
});

describe('normalizeAddress', () => {
  it('writes an IPv4-mapped IPv6 address as IPv4 and any other IPv6 address canonically', () => {
    expect(
      ['::ffff:127.0.0.1', '::FFFF:127.0.0.1', '0:0:0:0:0:ffff:7f00:1', '::ffff:7f00:1', '127.0.0.1'].map(
        normalizeAddress,
      ),
    ).toEqual(['127.0.0.1', '127.0.0.1', '127.0.0.1', '127.0.0.1', '127.0.0.1']);
    expect(['2001:DB8:0:0:0:0:0:7', '2001:db8::7', '::1', '0:0:0:0:0:0:0:1'].map(normalizeAddress)).toEqual([
      '2001:db8::7',
      '2001:db8::7',
      '::1',
      '::1',
    ]);
    expect(['fe80::1%eth0', 'unknown'].map(normalizeAddress)).toEqual(['fe80::1%eth0', 'unknown']);
  });
});
