/**
 * Transport rules for Authorization Server URLs: HTTPS always, plain HTTP only
 * to a loopback address and only when the operator allowed insecure loopback
 * (OAUTH_ALLOW_INSECURE_LOOPBACK, development).
 */
import { isIP } from 'node:net';

/** True for localhost, 127.0.0.0/8 and ::1 (as a URL hostname, brackets allowed). */
export function isLoopbackHostname(hostname: string): boolean {
  const host =
    hostname.startsWith('[') && hostname.endsWith(']') ? hostname.slice(1, -1) : hostname;
  if (host.toLowerCase() === 'localhost') return true;
  if (isIP(host) === 4) return host.startsWith('127.');
  if (isIP(host) === 6) return host === '::1' || host === '0:0:0:0:0:0:0:1';
  return false;
}

/** Why `url` may not be used to reach an Authorization Server, or undefined when it may. */
export function insecureUrlReason(url: URL, allowInsecureLoopback: boolean): string | undefined {
  if (url.protocol === 'https:') return undefined;
  if (url.protocol !== 'http:') return `${url.href} is not an https URL`;
  if (!isLoopbackHostname(url.hostname)) return `${url.href} does not use HTTPS`;
  if (!allowInsecureLoopback) {
    return `${url.href} uses plain HTTP; allow insecure loopback URLs (OAUTH_ALLOW_INSECURE_LOOPBACK) for local development`;
  }
  return undefined;
}
