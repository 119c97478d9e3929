// Several replicas (rule 16): the addresses a client is given become one grpc-js target whose
// addresses the channel spreads its calls over with round_robin, so that a stream reopened after
// a replica went away reaches one that is up.
import { isIPv4, isIPv6 } from 'node:net';

/** Targets grpc-js resolves itself: passed on as they are. */
const SCHEMES = /^(dns|ipv4|ipv6|unix|unix-abstract|vsock):/;

/** The default service config of every client channel: round_robin over every address. */
export const ROUND_ROBIN = JSON.stringify({ loadBalancingConfig: [{ round_robin: {} }] });

/**
 * @internal The grpc-js target for `address`: a `host:port`, a list of them (an array, or one
 * string with commas), or a grpc-js target with its scheme (`dns:name:port` for a name with
 * several addresses, `ipv4:a:p,b:q`, ...). A list of more than one address must be IP literals
 * (all IPv4 or all IPv6, `[v6]:port`): grpc-js has no static list of host names; give one
 * `dns:` name that resolves to every replica instead.
 */
export function channelTarget(address: string | readonly string[]): string {
  if (typeof address === 'string' && SCHEMES.test(address)) {
    return address;
  }
  const list = (typeof address === 'string' ? address.split(',') : [...address])
    .map((a) => {
      if (typeof a !== 'string') {
        throw new TypeError('each address must be a string');
      }
      return a.trim();
    })
    .filter((a) => a !== '');
  if (list.length === 0) {
    throw new TypeError('no server address given');
  }
  if (list.length === 1) {
    return list[0];
  }
  const hosts = list.map((a) => {
    const bracketed = /^\[([^\]]+)\](?::\d+)?$/.exec(a);
    if (bracketed !== null) {
      return bracketed[1];
    }
    const colon = a.lastIndexOf(':');
    return colon < 0 ? a : a.slice(0, colon);
  });
  if (hosts.every((h) => isIPv4(h))) {
    return `ipv4:${list.join(',')}`;
  }
  if (hosts.every((h) => isIPv6(h))) {
    return `ipv6:${list.join(',')}`;
  }
  throw new TypeError(`several addresses must all be IPv4 or all be IPv6 literals (${list.join(', ')}); `
    + 'for host names give one dns: name that resolves to every replica');
}
