import { createServer, connect, type AddressInfo, type Socket } from 'node:net';

export interface TcpProxy {
  /** http://127.0.0.1:<port>: give it to the client as baseUrl. */
  baseUrl: string;
  /** TCP connections the client opened to the proxy so far. */
  connections(): number;
  /** Client connections still open (not closed by either side). */
  openSockets(): number;
  /** Every byte the client sent, as text (request lines, headers, bodies). */
  sent(): string;
  close(): Promise<void>;
}

/**
 * A plain TCP relay in front of the simulator: it lets a test see what the client puts on the wire
 * (connections opened, raw requests) without touching the client or the simulator. The Host header the
 * client sends names the proxy, and the simulator signs against the Host header, so signatures still match.
 */
export async function startTcpProxy(targetBaseUrl: string): Promise<TcpProxy> {
  const target = new URL(targetBaseUrl);
  const sockets = new Set<Socket>();
  const inbounds = new Set<Socket>();
  const chunks: Buffer[] = [];
  let count = 0;
  const server = createServer((inbound) => {
    count += 1;
    inbounds.add(inbound);
    inbound.on('close', () => inbounds.delete(inbound));
    const outbound = connect(Number(target.port), target.hostname);
    for (const s of [inbound, outbound]) {
      sockets.add(s);
      s.on('close', () => sockets.delete(s));
      s.on('error', () => undefined);
    }
    inbound.on('data', (chunk: Buffer) => chunks.push(Buffer.from(chunk)));
    inbound.pipe(outbound);
    outbound.pipe(inbound);
    inbound.on('close', () => outbound.destroy());
    outbound.on('close', () => inbound.destroy());
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  const { port } = server.address() as AddressInfo;
  return {
    baseUrl: `http://127.0.0.1:${port}`,
    connections: () => count,
    openSockets: () => inbounds.size,
    sent: () => Buffer.concat(chunks).toString('utf8'),
    close: async () => {
      for (const s of sockets) s.destroy();
      await new Promise<void>((resolve) => server.close(() => resolve()));
    },
  };
}

/** The Authorization headers found in raw HTTP request text. */
export function authorizationHeaders(raw: string): string[] {
  return [...raw.matchAll(/^authorization:\s*(.+?)\r?$/gim)].map((m) => m[1]!);
}
