import { readFileSync } from 'node:fs';
import net from 'node:net';

/**
 * A loopback port for a process whose URL others must know before it listens (a gateway that the
 * sandbox calls back, a child process given `--port`).
 *
 * It is not taken with `listen(0)`: that port comes from the kernel's ephemeral range, the same range
 * every outgoing connection (Postgres, NATS, Redis, gRPC) takes its local port from, so between the
 * probe closing it and the real server binding it, a connection opened by the same suite could take it
 * (CI saw `listen EADDRINUSE` on a gateway's port that way). Ports below that range are never given to
 * outgoing connections; one is drawn at random there and probed by binding it. Two probes drawing the
 * same port at once is the one race left: one in several thousand per pair of concurrent calls.
 */
export async function freePort(): Promise<number> {
  const [low, high] = freeRange();
  for (let attempt = 0; attempt < 64; attempt++) {
    const port = low + Math.floor(Math.random() * (high - low));
    if (await bindable(port)) return port;
  }
  throw new Error(`no free loopback port found in ${low}-${high}`);
}

/** The ports below the ephemeral range, above the well-known and most registered services ones. */
function freeRange(): [number, number] {
  let ephemeralLow = 32768;
  try {
    const [lo] = readFileSync('/proc/sys/net/ipv4/ip_local_port_range', 'utf8').trim().split(/\s+/).map(Number);
    if (lo !== undefined && Number.isInteger(lo) && lo > 0) ephemeralLow = lo;
  } catch {
    // not Linux: the range's usual start
  }
  const low = 20000;
  return ephemeralLow - low >= 1000 ? [low, ephemeralLow] : [1025, ephemeralLow];
}

function bindable(port: number): Promise<boolean> {
  return new Promise((resolve) => {
    const s = net.createServer();
    s.once('error', () => resolve(false));
    s.listen({ port, host: '127.0.0.1', exclusive: true }, () => s.close(() => resolve(true)));
  });
}
