/**
 * `*.localhost` does not resolve inside Node on every machine, so tests reach
 * hosted servers through an undici dispatcher whose lookup sends every name
 * to 127.0.0.1. Only loopback is ever contacted.
 */
import { Agent, fetch as undiciFetch } from 'undici';

const loopbackAgent = new Agent({
  connect: {
    lookup: (_hostname, options, callback) => {
      if ((options as { all?: boolean }).all) callback(null, [{ address: '127.0.0.1', family: 4 }]);
      else (callback as (e: null, a: string, f: number) => void)(null, '127.0.0.1', 4);
    },
  },
});

/** fetch that resolves every host name to 127.0.0.1. */
export const loopbackFetch: typeof fetch = ((
  input: Parameters<typeof fetch>[0],
  init?: RequestInit,
) =>
  undiciFetch(
    input as never,
    { ...(init as object), dispatcher: loopbackAgent } as never,
  )) as unknown as typeof fetch;
