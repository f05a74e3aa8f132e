/**
 * What a start says when a listener cannot bind: one line naming the port
 * and the setting that chose it, instead of Node's `listen EADDRINUSE` and a
 * stack. An operator's first start meets this when another mcphost (or any
 * program) already holds 8080.
 */
import { McphostError } from '../errors.js';

/** The setting that chose a listener's port. */
export type PortSetting = 'PORT' | 'ADMIN_PORT';

/**
 * ERR_PORT_UNAVAILABLE for a bind failure Node reports by code (in use, not
 * permitted, not an address of this machine); anything else unchanged.
 * `host` is LISTEN_HOST.
 */
export function listenError(
  error: unknown,
  port: number,
  host: string,
  setting: PortSetting,
): unknown {
  const code = (error as { code?: unknown } | null)?.code;
  const message = messageFor(code, port, host, setting);
  return message === undefined
    ? error
    : new McphostError('ERR_PORT_UNAVAILABLE', message, { cause: error });
}

function messageFor(
  code: unknown,
  port: number,
  host: string,
  setting: PortSetting,
): string | undefined {
  switch (code) {
    case 'EADDRINUSE':
      return `port ${port} is in use (another mcphost, or another program?): stop it or set ${setting} to a free port`;
    case 'EACCES':
      return `port ${port} may not be opened by this user (ports below 1024 need privileges): set ${setting} to 1024 or above`;
    case 'EADDRNOTAVAIL':
      return `${host} is not an address of this machine, so port ${port} cannot be opened on it: set LISTEN_HOST to one of its addresses, or 0.0.0.0`;
    default:
      return undefined;
  }
}
