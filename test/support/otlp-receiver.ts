import http from 'node:http';
import type { AddressInfo } from 'node:net';

/**
 * A plain OTLP/HTTP trace receiver on loopback, as a collector would be: POST /v1/traces with
 * `application/json` (OTLP/JSON: the processes run with `OTEL_EXPORTER_OTLP_PROTOCOL=http/json`);
 * another content type is 415. Every span received is kept, with the service that sent it.
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
      if (type !== 'application/json') {
        res.writeHead(415).end();
        return;
      }
      const body = Buffer.concat(chunks);
      const at = Date.now();
      try {
        const spans = fromJson(JSON.parse(body.toString('utf8')));
        for (const s of spans) received.push({ ...s, receivedAt: at });
      } catch (err) {
        res.writeHead(400, { 'content-type': 'text/plain' }).end(String(err));
        return;
      }
      res.writeHead(200, { 'content-type': 'application/json' }).end('{}');
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
