/**
 * PostgreSQL's own way to stop a running statement: a CancelRequest sent on a
 * new connection, naming the backend by its process id and the secret key it
 * gave at start-up (what psql does on Ctrl-C). It needs no login and no
 * connection of the pool — which may all be held by the very statements to
 * stop — and it reaches only the backend whose key we hold, unlike
 * `pg_cancel_backend(pid)`, which any session of the same role may aim at
 * any backend of that role.
 */
import { connect } from 'node:net';

/** The request code of a CancelRequest (1234 in the high 16 bits, 5678 in the low). */
const CANCEL_REQUEST_CODE = 80877102;

/** Which backend to cancel: its address and the key data it sent when the connection started. */
export interface PgBackendKey {
  /** Address the pool dials (checked by the egress policy). */
  address: string;
  port: number;
  processId: number;
  secretKey: number;
}

/**
 * Sends a CancelRequest for `backend` and resolves once the server closed the
 * request's connection (it answers nothing), or after `timeoutMs`. Never
 * rejects: a cancel that cannot be delivered leaves the statement to the
 * caller's fallback (closing its connection).
 */
export function sendPgCancelRequest(backend: PgBackendKey, timeoutMs: number): Promise<void> {
  return new Promise((resolve) => {
    const message = Buffer.alloc(16);
    message.writeInt32BE(16, 0);
    message.writeInt32BE(CANCEL_REQUEST_CODE, 4);
    message.writeInt32BE(backend.processId, 8);
    message.writeInt32BE(backend.secretKey, 12);
    const socket = connect({ host: backend.address, port: backend.port });
    const done = (): void => {
      clearTimeout(timer);
      socket.destroy();
      resolve();
    };
    const timer = setTimeout(done, timeoutMs);
    socket.once('connect', () => socket.end(message));
    socket.once('close', done);
    socket.once('error', done);
  });
}

/** The key data node-postgres keeps of a connected client (not in its type declarations). */
export function backendKeyOf(
  client: unknown,
): { processId: number; secretKey: number } | undefined {
  const { processID, secretKey } = client as { processID?: unknown; secretKey?: unknown };
  if (typeof processID !== 'number' || typeof secretKey !== 'number') return undefined;
  return { processId: processID, secretKey };
}
