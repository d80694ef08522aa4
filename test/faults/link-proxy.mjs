// A network link the fault suite can degrade: a loopback TCP proxy in front of one server (a ledger replica,
// a Postgres node). Bytes pass through unchanged (the mesh's TLS and Postgres's protocol are end to end).
//
// - `delayMs`: while set, every chunk the server sends back is held that long (in order), so each
//   reply arrives late while the request was applied on time (the slow-ledger fault).
// - `hang()` / `heal()`: a partition that drops traffic silently instead of closing. Nothing passes
//   either way on any connection, old or new: no byte, no FIN, no reset, as when a switch or a
//   security group starts dropping packets. The proxy stops reading both sockets, so each sender's
//   kernel buffers fill and its writes wait, as TCP's do when nothing is acknowledged; a connection
//   made meanwhile is accepted and left waiting (its server is not dialled). `heal({ reset: false })`
//   lets everything held go on (the partition was shorter than TCP's retransmissions: the bytes
//   arrive late); `heal({ reset: true })` resets every connection that lived through it (TCP gave up,
//   or a firewall lost its state), so each side learns only then that its connection is gone.
//   Nothing here answers on the server's behalf: only time-outs, keep-alives and sweepers notice.
//
// The proxies run in a worker thread of their own (`startLinkHost`): the suite's main thread blocks now and
// then (a standby rebuilt with pg_basebackup, a restore, both synchronous), and a proxy on that thread would
// then hold every connection through it, a partition nobody asked for. The main thread drives each link by
// messages (`hang`, `heal`, `delayMs`), in order; `stats()` asks for its counters.

import net from 'node:net';
import { Worker, isMainThread, parentPort, workerData } from 'node:worker_threads';

function linkProxy(listenPort, upstreamPort) {
  const proxy = {
    delayMs: 0,
    connections: 0,
    delayedChunks: 0,
    delayedBytes: 0,
    /** Connections alive during a partition (held, then resumed or reset), over the run. */
    heldConnections: 0,
    hung: false,
    /** The live connections: { client, upstream (undefined until dialled), flush }. */
    pairs: new Set(),
    server: undefined,
    hang() {
      this.hung = true;
      for (const p of this.pairs) {
        this.heldConnections++;
        p.heldSince = Date.now();
        p.client.pause();
        p.upstream?.pause();
      }
    },
    heal({ reset }) {
      this.hung = false;
      for (const p of [...this.pairs]) {
        if (reset && p.heldSince !== undefined) {
          p.client.resetAndDestroy();
          p.upstream?.resetAndDestroy();
          continue;
        }
        p.heldSince = undefined;
        if (!p.upstream) dial(p);
        p.client.resume();
        p.upstream.resume();
        p.flush();
      }
    },
    close() {
      for (const p of this.pairs) p.destroy();
      return new Promise((r) => this.server.close(r));
    },
  };
  /** A write that, when the other side's buffer is full, stops reading this side until it drains (unless hung). */
  const forward = (from, to) => (chunk) => {
    if (!to.write(chunk)) {
      from.pause();
      to.once('drain', () => {
        if (!proxy.hung) from.resume();
      });
    }
  };
  const dial = (p) => {
    const upstream = net.connect({ port: upstreamPort, host: '127.0.0.1', noDelay: true });
    p.upstream = upstream;
    upstream.on('error', () => p.destroy());
    p.client.on('data', forward(p.client, upstream)); // requests: at once
    p.client.on('end', () => upstream.end());
    // Replies: in order, each chunk no earlier than delayMs after it arrived.
    upstream.on('data', (chunk) => {
      const delay = proxy.delayMs;
      if (!p.queue.length && delay === 0 && !proxy.hung) {
        forward(upstream, p.client)(chunk);
        return;
      }
      if (delay > 0) {
        proxy.delayedChunks++;
        proxy.delayedBytes += chunk.length;
      }
      const due = Math.max(Date.now() + delay, p.queue.at(-1)?.due ?? 0);
      p.queue.push({ due, chunk });
      p.timer ??= setTimeout(p.flush, Math.max(0, p.queue[0].due - Date.now()));
    });
    upstream.on('end', () => {
      p.ended = true;
      if (!p.queue.length) p.client.end();
    });
  };
  proxy.server = net.createServer({ noDelay: true, pauseOnConnect: true }, (client) => {
    proxy.connections++;
    const p = {
      client,
      upstream: undefined,
      queue: [],
      timer: undefined,
      ended: false,
      heldSince: undefined,
      destroy() {
        client.destroy();
        p.upstream?.destroy();
      },
      flush() {
        p.timer = undefined;
        if (proxy.hung) return; // heal() flushes
        const now = Date.now();
        while (p.queue.length && p.queue[0].due <= now) client.write(p.queue.shift().chunk);
        if (p.queue.length) p.timer = setTimeout(p.flush, p.queue[0].due - now);
        else if (p.ended) client.end();
      },
    };
    proxy.pairs.add(p);
    client.on('error', () => p.destroy());
    client.on('close', () => {
      proxy.pairs.delete(p);
      p.upstream?.destroy();
      if (p.timer) clearTimeout(p.timer);
      p.queue.length = 0;
    });
    if (proxy.hung) {
      // accepted by the kernel, then nothing: the server is dialled only if the link heals
      proxy.heldConnections++;
      p.heldSince = Date.now();
      return;
    }
    dial(p);
    client.resume();
  });
  return new Promise((resolve, reject) => {
    proxy.server.once('error', reject);
    proxy.server.listen(listenPort, '127.0.0.1', () => resolve(proxy));
  });
}

// ---------------------------------------------------------------------------------------------
// The worker thread: the links, by id, driven by the main thread's messages.

if (!isMainThread && workerData?.linkHost) {
  const links = new Map();
  parentPort.on('message', async (m) => {
    const reply = (r) => parentPort.postMessage({ req: m.req, ...r });
    try {
      const link = links.get(m.id);
      switch (m.op) {
        case 'open':
          links.set(m.id, await linkProxy(m.listen, m.upstream));
          return reply({ ok: true });
        case 'delay':
          link.delayMs = m.delayMs;
          return;
        case 'hang':
          link.hang();
          return;
        case 'heal':
          link.heal({ reset: m.reset });
          return;
        case 'stats':
          return reply({
            ok: true,
            stats: { connections: link.connections, delayedChunks: link.delayedChunks, delayedBytes: link.delayedBytes, heldConnections: link.heldConnections },
          });
        case 'close':
          await link.close();
          links.delete(m.id);
          return reply({ ok: true });
      }
    } catch (err) {
      if (m.req !== undefined) reply({ ok: false, error: String(err?.message ?? err) });
    }
  });
}

/**
 * The thread that serves the links. `link(listenPort, upstreamPort)` opens one and resolves once it listens:
 * `hang()`, `heal({ reset })`, `delayMs = n` take effect in the order sent; `stats()` and `close()` resolve
 * with the thread's answer.
 */
export async function startLinkHost() {
  const worker = new Worker(new URL(import.meta.url), { workerData: { linkHost: true } });
  worker.unref();
  const pending = new Map();
  let nextReq = 0;
  let nextId = 0;
  worker.on('message', (r) => {
    const p = pending.get(r.req);
    pending.delete(r.req);
    if (r.ok) p?.resolve(r);
    else p?.reject(new Error(r.error));
  });
  worker.on('error', (err) => {
    for (const p of pending.values()) p.reject(err);
    pending.clear();
  });
  const ask = (msg) =>
    new Promise((resolve, reject) => {
      const req = nextReq++;
      pending.set(req, { resolve, reject });
      worker.postMessage({ ...msg, req });
    });
  return {
    async link(listen, upstream) {
      const id = nextId++;
      await ask({ op: 'open', id, listen, upstream });
      let delayMs = 0;
      return {
        hung: false,
        get delayMs() {
          return delayMs;
        },
        set delayMs(ms) {
          delayMs = ms;
          worker.postMessage({ op: 'delay', id, delayMs: ms });
        },
        hang() {
          this.hung = true;
          worker.postMessage({ op: 'hang', id });
        },
        heal({ reset }) {
          this.hung = false;
          worker.postMessage({ op: 'heal', id, reset });
        },
        async stats() {
          return (await ask({ op: 'stats', id })).stats;
        },
        close: () => ask({ op: 'close', id }),
      };
    },
    terminate: () => worker.terminate(),
  };
}
