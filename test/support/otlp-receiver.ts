import http from 'node:http';
import type { AddressInfo } from 'node:net';

/**
 * A plain OTLP/HTTP trace receiver on loopback, as a collector would be: POST /v1/traces with
 * `application/json` (OTLP/JSON, `OTEL_EXPORTER_OTLP_PROTOCOL=http/json`) or `application/x-protobuf`
 * (the default `http/protobuf`, decoded by the small wire-format reader below: only the fields the
 * tests read). Every span received is kept, with the service that sent it.
 */
export const SPAN_KINDS = ['UNSPECIFIED', 'INTERNAL', 'SERVER', 'CLIENT', 'PRODUCER', 'CONSUMER'] as const;
export type SpanKindName = (typeof SPAN_KINDS)[number];

export interface ReceivedLink {
  traceId: string;
  spanId: string;
  attributes: Record<string, unknown>;
}

export interface ReceivedSpan {
  service: string;
  scope: string;
  traceId: string;
  spanId: string;
  parentSpanId: string;
  name: string;
  kind: SpanKindName;
  startNs: bigint;
  attributes: Record<string, unknown>;
  links: ReceivedLink[];
  /** When the receiver got it (ms since the epoch). */
  receivedAt: number;
}

export interface OtlpReceiver {
  url: string;
  spans(): ReceivedSpan[];
  /** The content types of the export requests received so far. */
  contentTypes(): Set<string>;
  clear(): void;
  close(): Promise<void>;
}

export async function startOtlpReceiver(): Promise<OtlpReceiver> {
  const received: ReceivedSpan[] = [];
  const types = new Set<string>();
  const server = http.createServer((req, res) => {
    const chunks: Buffer[] = [];
    req.on('data', (c: Buffer) => chunks.push(c));
    req.on('end', () => {
      const type = (req.headers['content-type'] ?? '').split(';')[0]!.trim();
      if (req.method !== 'POST' || req.url !== '/v1/traces') {
        res.writeHead(404).end();
        return;
      }
      types.add(type);
      const body = Buffer.concat(chunks);
      const at = Date.now();
      try {
        const spans = type === 'application/json' ? fromJson(JSON.parse(body.toString('utf8'))) : fromProtobuf(body);
        for (const s of spans) received.push({ ...s, receivedAt: at });
      } catch (err) {
        res.writeHead(400, { 'content-type': 'text/plain' }).end(String(err));
        return;
      }
      if (type === 'application/json') res.writeHead(200, { 'content-type': 'application/json' }).end('{}');
      else res.writeHead(200, { 'content-type': 'application/x-protobuf' }).end();
    });
  });
  await new Promise<void>((r) => server.listen(0, '127.0.0.1', r));
  const { port } = server.address() as AddressInfo;
  return {
    url: `http://127.0.0.1:${port}`,
    spans: () => [...received],
    contentTypes: () => new Set(types),
    clear: () => {
      received.length = 0;
    },
    close: () =>
      new Promise<void>((r) => {
        server.closeAllConnections();
        server.close(() => r());
      }),
  };
}

type Decoded = Omit<ReceivedSpan, 'receivedAt'>;

// ---- OTLP/JSON --------------------------------------------------------------------------------

interface JsonKeyValue {
  key: string;
  value?: Record<string, unknown>;
}
const jsonValue = (v: Record<string, unknown> | undefined): unknown => {
  if (!v) return undefined;
  if ('stringValue' in v) return v.stringValue;
  if ('intValue' in v) return Number(v.intValue);
  if ('doubleValue' in v) return v.doubleValue;
  if ('boolValue' in v) return v.boolValue;
  if ('arrayValue' in v) return ((v.arrayValue as { values?: Record<string, unknown>[] }).values ?? []).map(jsonValue);
  return undefined;
};
const jsonAttrs = (kvs: JsonKeyValue[] | undefined) => Object.fromEntries((kvs ?? []).map((kv) => [kv.key, jsonValue(kv.value)]));

function fromJson(body: {
  resourceSpans?: {
    resource?: { attributes?: JsonKeyValue[] };
    scopeSpans?: {
      scope?: { name?: string };
      spans?: {
        traceId: string;
        spanId: string;
        parentSpanId?: string;
        name: string;
        kind?: number;
        startTimeUnixNano?: string | number;
        attributes?: JsonKeyValue[];
        links?: { traceId: string; spanId: string; attributes?: JsonKeyValue[] }[];
      }[];
    }[];
  }[];
}): Decoded[] {
  const out: Decoded[] = [];
  for (const rs of body.resourceSpans ?? []) {
    const service = String(jsonAttrs(rs.resource?.attributes)['service.name'] ?? '');
    for (const ss of rs.scopeSpans ?? []) {
      for (const s of ss.spans ?? []) {
        out.push({
          service,
          scope: ss.scope?.name ?? '',
          traceId: s.traceId,
          spanId: s.spanId,
          parentSpanId: s.parentSpanId ?? '',
          name: s.name,
          kind: SPAN_KINDS[s.kind ?? 0] ?? 'UNSPECIFIED',
          startNs: BigInt(s.startTimeUnixNano ?? 0),
          attributes: jsonAttrs(s.attributes),
          links: (s.links ?? []).map((l) => ({ traceId: l.traceId, spanId: l.spanId, attributes: jsonAttrs(l.attributes) })),
        });
      }
    }
  }
  return out;
}

// ---- OTLP/protobuf (opentelemetry/proto/collector/trace/v1: the fields read here) -------------

/** The fields of one protobuf message: field number → raw values (Buffer for length-delimited, bigint otherwise). */
function fields(buf: Buffer): Map<number, (Buffer | bigint)[]> {
  const out = new Map<number, (Buffer | bigint)[]>();
  let i = 0;
  const varint = (): bigint => {
    let v = 0n;
    let shift = 0n;
    for (;;) {
      const b = buf[i++]!;
      v |= BigInt(b & 0x7f) << shift;
      if ((b & 0x80) === 0) return v;
      shift += 7n;
    }
  };
  while (i < buf.length) {
    const tag = Number(varint());
    const [field, wire] = [tag >>> 3, tag & 7];
    let v: Buffer | bigint;
    if (wire === 0) v = varint();
    else if (wire === 1) {
      v = buf.readBigUInt64LE(i);
      i += 8;
    } else if (wire === 2) {
      const len = Number(varint());
      v = buf.subarray(i, i + len);
      i += len;
    } else if (wire === 5) {
      v = BigInt(buf.readUInt32LE(i));
      i += 4;
    } else throw new Error(`unsupported wire type ${wire}`);
    const list = out.get(field) ?? [];
    list.push(v);
    out.set(field, list);
  }
  return out;
}
const bytesOf = (m: Map<number, (Buffer | bigint)[]>, f: number) => (m.get(f) ?? []) as Buffer[];
const hex = (m: Map<number, (Buffer | bigint)[]>, f: number) => bytesOf(m, f)[0]?.toString('hex') ?? '';
const str = (m: Map<number, (Buffer | bigint)[]>, f: number) => bytesOf(m, f)[0]?.toString('utf8') ?? '';
function pbValue(buf: Buffer): unknown {
  const m = fields(buf);
  if (m.has(1)) return str(m, 1);
  if (m.has(2)) return (m.get(2)![0] as bigint) !== 0n;
  if (m.has(3)) return Number(BigInt.asIntN(64, m.get(3)![0] as bigint));
  if (m.has(4)) {
    const b = Buffer.alloc(8);
    b.writeBigUInt64LE(m.get(4)![0] as bigint);
    return b.readDoubleLE();
  }
  return undefined;
}
const pbAttrs = (list: Buffer[]) =>
  Object.fromEntries(
    list.map((kv) => {
      const m = fields(kv);
      const v = bytesOf(m, 2)[0];
      return [str(m, 1), v ? pbValue(v) : undefined];
    }),
  );

function fromProtobuf(body: Buffer): Decoded[] {
  const out: Decoded[] = [];
  for (const rsBuf of bytesOf(fields(body), 1)) {
    const rs = fields(rsBuf);
    const resource = bytesOf(rs, 1)[0];
    const service = String(resource ? (pbAttrs(bytesOf(fields(resource), 1))['service.name'] ?? '') : '');
    for (const ssBuf of bytesOf(rs, 2)) {
      const ss = fields(ssBuf);
      const scopeBuf = bytesOf(ss, 1)[0];
      const scope = scopeBuf ? str(fields(scopeBuf), 1) : '';
      for (const spanBuf of bytesOf(ss, 2)) {
        const s = fields(spanBuf);
        out.push({
          service,
          scope,
          traceId: hex(s, 1),
          spanId: hex(s, 2),
          parentSpanId: hex(s, 4),
          name: str(s, 5),
          kind: SPAN_KINDS[Number((s.get(6)?.[0] as bigint | undefined) ?? 0n)] ?? 'UNSPECIFIED',
          startNs: (s.get(7)?.[0] as bigint | undefined) ?? 0n,
          attributes: pbAttrs(bytesOf(s, 9)),
          links: bytesOf(s, 13).map((lb) => {
            const l = fields(lb);
            return { traceId: hex(l, 1), spanId: hex(l, 2), attributes: pbAttrs(bytesOf(l, 4)) };
          }),
        });
      }
    }
  }
  return out;
}

// ---- Reading what was received ----------------------------------------------------------------

/** The spans as an indented tree (service, name, kind), children in start order; roots of several traces one after the other. */
export function spanTree(spans: ReceivedSpan[]): string {
  const ids = new Set(spans.map((s) => s.spanId));
  const children = new Map<string, ReceivedSpan[]>();
  const roots: ReceivedSpan[] = [];
  for (const s of spans) {
    if (s.parentSpanId && ids.has(s.parentSpanId)) children.set(s.parentSpanId, [...(children.get(s.parentSpanId) ?? []), s]);
    else roots.push(s);
  }
  const byStart = (a: ReceivedSpan, b: ReceivedSpan) => (a.startNs < b.startNs ? -1 : a.startNs > b.startNs ? 1 : 0);
  const lines: string[] = [];
  const walk = (s: ReceivedSpan, depth: number) => {
    const links = s.links.length ? `  ↔ linked to ${s.links.map((l) => `${l.traceId.slice(0, 8)}…`).join(', ')}` : '';
    lines.push(`${'  '.repeat(depth)}${s.service}  ${s.name}  [${s.kind}]${links}`);
    for (const c of (children.get(s.spanId) ?? []).sort(byStart)) walk(c, depth + 1);
  };
  for (const r of roots.sort(byStart)) {
    if (r.parentSpanId) lines.push(`(parent ${r.parentSpanId} not received)`);
    walk(r, 0);
  }
  return lines.join('\n');
}
