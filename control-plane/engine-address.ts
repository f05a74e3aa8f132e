/**
 * One entry of DOCKER_ENGINES: a local socket (`unix:///var/run/docker.sock`)
 * or a remote engine over TLS (`tcp://10.0.0.5:2376?certs=/etc/mcphost/engine-b`,
 * the folder holding `ca.pem`, `cert.pem` and `key.pem` as Docker's own
 * DOCKER_CERT_PATH does). A remote engine without client certificates is
 * refused: whoever reaches an engine's API is root on its host.
 */
export type EngineAddress =
  | { name: string; kind: 'unix'; socketPath: string }
  | { name: string; kind: 'tcp'; host: string; port: number; certDir: string };

/** The address parsed, or a message saying what is wrong with it. */
export function parseEngineAddress(text: string): EngineAddress | string {
  let url: URL;
  try {
    url = new URL(text);
  } catch {
    return `${JSON.stringify(text)} is not unix:///path or tcp://host:port?certs=/dir`;
  }
  if (url.protocol === 'unix:') {
    if (url.host !== '' || !url.pathname.startsWith('/') || url.search !== '') {
      return `${JSON.stringify(text)}: a socket is unix:///absolute/path`;
    }
    return { name: text, kind: 'unix', socketPath: decodeURIComponent(url.pathname) };
  }
  if (url.protocol === 'tcp:') {
    const certDir = url.searchParams.get('certs');
    if (url.hostname === '' || url.port === '') {
      return `${JSON.stringify(text)}: a remote engine is tcp://host:port?certs=/dir`;
    }
    if (certDir === null || !certDir.startsWith('/')) {
      return `${JSON.stringify(text)}: a remote engine needs ?certs=/dir with its TLS client certificates (ca.pem, cert.pem, key.pem)`;
    }
    return {
      name: `tcp://${url.host}`,
      kind: 'tcp',
      host: url.hostname.replace(/^\[|\]$/g, ''),
      port: Number(url.port),
      certDir,
    };
  }
  return `${JSON.stringify(text)}: only unix:// and tcp:// engines are supported`;
}
