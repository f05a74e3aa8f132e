/**
 * The tools the fault suite calls: an echo that returns its `token` argument
 * (after an optional sleep, so killed containers are often busy ones), saved
 * through the admin API of a running control plane.
 */
import type { ChildControlPlane } from './child-control-plane.js';

/** Code of the echo tool: sleeps `delayMs` (optional), returns `token`. */
export const ECHO_CODE =
  'if (params.delayMs) await new Promise((r) => setTimeout(r, params.delayMs)); return params.token;';

/** Parameters of the echo tool. */
export const ECHO_PARAMETERS = [
  { name: 'token', type: 'string', required: true },
  { name: 'delayMs', type: 'number', required: false },
];

/** Creates server `subdomain` and saves one echo tool under each of `toolNames`. */
export async function createEchoServer(
  plane: Pick<ChildControlPlane, 'admin'>,
  subdomain: string,
  toolNames: readonly string[],
): Promise<void> {
  const created = await plane.admin('POST', '/api/servers', { subdomain });
  if (created.status !== 201) throw new Error(`create ${subdomain}: ${JSON.stringify(created)}`);
  for (const name of toolNames) {
    await saveTool(plane, subdomain, name, {
      description: 'Echoes its token.',
      parameters: ECHO_PARAMETERS,
      code: ECHO_CODE,
    });
  }
}

/** Saves one tool; throws with the answer unless it was stored. */
export async function saveTool(
  plane: Pick<ChildControlPlane, 'admin'>,
  subdomain: string,
  name: string,
  body: object,
): Promise<void> {
  const saved = await plane.admin('PUT', `/api/servers/${subdomain}/tools/${name}`, body);
  if (saved.status !== 201 && saved.status !== 200)
    throw new Error(`save ${subdomain}/${name}: ${JSON.stringify(saved)}`);
}
