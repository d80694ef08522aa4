import MarkdownIt from 'markdown-it';

/**
 * The API reference as server-rendered HTML pages, built from the served OpenAPI 3.1 document (once per
 * process, on the first request): /docs lists every operation (introduction, authentication, one line per
 * operation), each operation has its own page, /docs/operations/<operationId>, that the index's script
 * loads into the line when a reader opens it, and /docs/schemas holds every schema. The browser paints
 * each page as it arrives, with no script to run first, so the index shows at once whatever the size of
 * the document; the pages are plain semantic HTML (landmarks, headings, tables with headers, native
 * <details> disclosures) that meet WCAG 2 AA under the dashboard's strict Content-Security-Policy.
 * The interactive console ("Probar": Swagger UI, heavier) is another page, /docs/explorer, linked from
 * each operation.
 */

// The document is JSON walked generically (any OpenAPI 3.1 object may sit where a schema or a $ref is).
// eslint-disable-next-line @typescript-eslint/no-explicit-any
type Json = Record<string, any>;

export interface ReferenceLinks {
  /** Where the interactive console is, and how to link one of its operations (Swagger UI's deep links). */
  explorer: string;
  /** Extra links shown in the page's header (e.g. the changelog, the event catalogue). */
  extra?: Array<{ href: string; text: string }>;
}

/** Where the pages are (docs.routes.ts serves them there). */
export const REFERENCE_PATH = '/docs';
export const SCHEMAS_PATH = '/docs/schemas';
export const OPERATIONS_PATH = '/docs/operations';

const METHODS = ['get', 'post', 'put', 'patch', 'delete', 'head', 'options', 'trace'] as const;

/** Markdown of the document's descriptions: raw HTML is shown as text, except the `<br>` the error lists use. */
const md = new MarkdownIt({ html: false, linkify: false, typographer: false });
/** Rendered once per text: the same descriptions (error lists, shared headers and parameters) recur on every operation. */
function memo(render: (text: string) => string): (text: unknown) => string {
  const done = new Map<string, string>();
  return (text) => {
    if (typeof text !== 'string' || !text.trim()) return '';
    let html = done.get(text);
    if (html === undefined) done.set(text, (html = render(text)));
    return html;
  };
}

export function escapeHtml(s: unknown): string {
  return String(s).replace(/[&<>"']/g, (c) => ({ '&': '&amp;', '<': '&lt;', '>': '&gt;', '"': '&quot;', "'": '&#39;' })[c]!);
}

/** An id attribute's value from any text (letters, digits, `-`, `_`). */
const slug = (s: string): string => s.replace(/[^A-Za-z0-9_-]+/g, '-').replace(/^-+|-+$/g, '');

/** Swagger UI's deep link of an operation: `#/<tag>/<operationId>` with the tag's spaces as `_`. */
export function explorerLink(explorer: string, tag: string | undefined, operationId: string): string {
  return `${explorer}#/${encodeURIComponent((tag ?? 'default').replace(/\s/g, '_'))}/${encodeURIComponent(operationId)}`;
}

class Renderer {
  private readonly markdown = memo((t) => md.render(t.replace(/<br\s*\/?>/g, '  \n')));
  private readonly markdownInline = memo((t) => md.renderInline(t.replace(/<br\s*\/?>/g, ' ')));

  constructor(
    private readonly doc: Json,
    private readonly links: ReferenceLinks,
  ) {}

  /** A `#/components/...` reference's target (parameters, headers, responses are shown inline). */
  private resolve(obj: Json): Json {
    let o = obj;
    for (let i = 0; i < 10 && o && typeof o.$ref === 'string'; i++) {
      const parts = o.$ref.replace(/^#\//, '').split('/');
      // eslint-disable-next-line @typescript-eslint/no-explicit-any
      o = parts.reduce<any>((acc, p) => acc?.[p.replace(/~1/g, '/').replace(/~0/g, '~')], this.doc);
    }
    return o ?? {};
  }

  private schemaName(ref: string): string | undefined {
    const m = /^#\/components\/schemas\/(.+)$/.exec(ref);
    return m ? m[1] : undefined;
  }

  private schemaLink(name: string): string {
    return `<a href="${SCHEMAS_PATH}#schema-${slug(name)}">${escapeHtml(name)}</a>`;
  }

  /** The facts of a schema besides its shape: format, bounds, pattern, default, enum. */
  private constraints(s: Json): string[] {
    const out: string[] = [];
    if (s.format) out.push(`formato <code>${escapeHtml(s.format)}</code>`);
    if (s.minimum !== undefined) out.push(`≥ ${escapeHtml(s.minimum)}`);
    if (s.exclusiveMinimum !== undefined) out.push(`&gt; ${escapeHtml(s.exclusiveMinimum)}`);
    if (s.maximum !== undefined) out.push(`≤ ${escapeHtml(s.maximum)}`);
    if (s.exclusiveMaximum !== undefined) out.push(`&lt; ${escapeHtml(s.exclusiveMaximum)}`);
    if (s.minLength !== undefined) out.push(`longitud ≥ ${escapeHtml(s.minLength)}`);
    if (s.maxLength !== undefined) out.push(`longitud ≤ ${escapeHtml(s.maxLength)}`);
    if (s.minItems !== undefined) out.push(`elementos ≥ ${escapeHtml(s.minItems)}`);
    if (s.maxItems !== undefined) out.push(`elementos ≤ ${escapeHtml(s.maxItems)}`);
    if (s.pattern) out.push(`patrón <code>${escapeHtml(s.pattern)}</code>`);
    if (s.const !== undefined) out.push(`valor fijo <code>${escapeHtml(JSON.stringify(s.const))}</code>`);
    if (Array.isArray(s.enum)) out.push(`uno de ${s.enum.map((v: unknown) => `<code>${escapeHtml(JSON.stringify(v))}</code>`).join(', ')}`);
    const def = s.default ?? s['x-default'];
    if (def !== undefined) out.push(`por defecto <code>${escapeHtml(JSON.stringify(def))}</code>`);
    if (s.deprecated) out.push('<strong>obsoleto</strong>');
    return out;
  }

  /** A short type label (`string`, `integer`, a schema's link, `array de …`) and whether the schema needs a table of its own. */
  private typeLabel(s: Json): string {
    if (!s || typeof s !== 'object') return 'cualquiera';
    if (typeof s.$ref === 'string') {
      const name = this.schemaName(s.$ref);
      return name ? this.schemaLink(name) : this.typeLabel(this.resolve(s));
    }
    const types = Array.isArray(s.type) ? s.type : s.type ? [s.type] : [];
    if (types.includes('array') || s.items) return `array de ${this.typeLabel(s.items ?? {})}`;
    if (s.oneOf || s.anyOf) return (s.oneOf ?? s.anyOf).map((x: Json) => this.typeLabel(x)).join(' | ');
    if (s.allOf) return s.allOf.map((x: Json) => this.typeLabel(x)).join(' y ');
    if (types.length) return types.map((t: string) => escapeHtml(t)).join(' | ');
    if (s.properties) return 'object';
    if (s.const !== undefined) return escapeHtml(typeof s.const);
    if (Array.isArray(s.enum)) return escapeHtml(typeof s.enum[0]);
    return 'cualquiera';
  }

  /** Whether a schema is drawn as more than its type label (properties, alternatives, parts). */
  private hasBody(s: Json): boolean {
    if (!s || typeof s !== 'object' || s.$ref) return false;
    return Boolean(
      s.properties || s.oneOf || s.anyOf || s.allOf || (s.items && this.hasBody(s.items)) || s.additionalProperties?.type || s.additionalProperties?.$ref,
    );
  }

  /** A schema drawn in full: its description, facts, properties (a table), alternatives or parts. */
  schema(s: Json, depth = 0): string {
    if (!s || typeof s !== 'object') return '';
    if (s.$ref) {
      const name = this.schemaName(s.$ref);
      return `<p class="type">Esquema ${name ? this.schemaLink(name) : this.typeLabel(s)}</p>`;
    }
    let html = '';
    if (depth > 0 && s.description) html += `<div class="desc">${this.markdown(s.description)}</div>`;
    const facts = this.constraints(s);
    if (!s.properties && !s.oneOf && !s.anyOf && !s.allOf)
      html += `<p class="type">Tipo ${this.typeLabel(s)}${facts.length ? `; ${facts.join('; ')}` : ''}</p>`;
    else if (facts.length) html += `<p class="facts">${facts.join('; ')}</p>`;
    if (depth > 6) return html;
    if (s.items && this.hasBody(s.items)) html += `<div class="nested">${this.schema(s.items, depth + 1)}</div>`;
    if (s.properties) html += this.properties(s, depth);
    const alternatives = s.oneOf ?? s.anyOf;
    if (alternatives) {
      html += `<p>${s.oneOf ? 'Exactamente una de estas formas' : 'Una o más de estas formas'}${s.discriminator?.propertyName ? ` (según <code>${escapeHtml(s.discriminator.propertyName)}</code>)` : ''}:</p><ol class="alternatives">`;
      for (const alt of alternatives) html += `<li>${this.typeLabel(alt)}${this.hasBody(alt) ? this.schema(alt, depth + 1) : ''}</li>`;
      html += '</ol>';
    }
    if (s.allOf) {
      html += '<p>Todas estas partes:</p><ol class="alternatives">';
      for (const part of s.allOf) html += `<li>${part.$ref ? this.typeLabel(part) : this.schema(part, depth + 1)}</li>`;
      html += '</ol>';
    }
    const extra = s.additionalProperties;
    if (extra && typeof extra === 'object') html += `<p>Otras claves: ${this.typeLabel(extra)}</p>`;
    if (depth === 0 && s.example !== undefined) html += this.example(s.example, 'Ejemplo');
    return html;
  }

  private properties(s: Json, depth: number): string {
    const required = new Set<string>(s.required ?? []);
    let rows = '';
    for (const [name, raw] of Object.entries<Json>(s.properties)) {
      const p = raw ?? {};
      const facts = p.$ref ? [] : this.constraints(p);
      const nested = this.hasBody(p) ? `<div class="nested">${this.schema({ ...p, description: undefined }, depth + 1)}</div>` : '';
      rows +=
        `<tr><th scope="row"><code>${escapeHtml(name)}</code>${required.has(name) ? ' <span class="req">requerido</span>' : ''}</th>` +
        `<td>${this.typeLabel(p)}${facts.length ? `<div class="facts">${facts.join('; ')}</div>` : ''}</td>` +
        `<td>${this.markdown(p.description)}${p.example !== undefined ? `<div class="facts">Ejemplo: <code>${escapeHtml(JSON.stringify(p.example))}</code></div>` : ''}${nested}</td></tr>`;
    }
    return `<table class="props"><thead><tr><th scope="col">Campo</th><th scope="col">Tipo</th><th scope="col">Descripción</th></tr></thead><tbody>${rows}</tbody></table>`;
  }

  private example(value: unknown, label: string): string {
    const text = typeof value === 'string' ? value : JSON.stringify(value, null, 2);
    return `<figure class="example"><figcaption>${escapeHtml(label)}</figcaption><pre tabindex="0"><code>${escapeHtml(text)}</code></pre></figure>`;
  }

  private examples(media: Json): string {
    let html = '';
    if (media.example !== undefined) html += this.example(media.example, 'Ejemplo');
    for (const [name, ex] of Object.entries<Json>(media.examples ?? {})) {
      const e = this.resolve(ex);
      if (e.value !== undefined) html += this.example(e.value, `Ejemplo: ${e.summary ?? name}`);
    }
    return html;
  }

  private content(content: Json | undefined): string {
    let html = '';
    for (const [type, media] of Object.entries<Json>(content ?? {})) {
      html += `<div class="media"><p class="media-type">Tipo de contenido <code>${escapeHtml(type)}</code></p>`;
      if (media.schema) html += this.schema(media.schema);
      html += `${this.examples(media)}</div>`;
    }
    return html;
  }

  private parameters(op: Json, shared: Json[]): string {
    const params = [...shared, ...(op.parameters ?? [])].map((p) => this.resolve(p));
    if (!params.length) return '';
    const where: Record<string, string> = { path: 'ruta', query: 'consulta', header: 'cabecera', cookie: 'cookie' };
    let rows = '';
    for (const p of params) {
      const facts = p.schema && !p.schema.$ref ? this.constraints(p.schema) : [];
      rows +=
        `<tr><th scope="row"><code>${escapeHtml(p.name)}</code>${p.required ? ' <span class="req">requerido</span>' : ''}</th>` +
        `<td>${escapeHtml(where[p.in] ?? p.in)}</td><td>${this.typeLabel(p.schema ?? {})}${facts.length ? `<div class="facts">${facts.join('; ')}</div>` : ''}</td>` +
        `<td>${this.markdown(p.description)}${p.example !== undefined ? `<div class="facts">Ejemplo: <code>${escapeHtml(JSON.stringify(p.example))}</code></div>` : ''}</td></tr>`;
    }
    return `<h4>Parámetros</h4><table class="params"><thead><tr><th scope="col">Nombre</th><th scope="col">En</th><th scope="col">Tipo</th><th scope="col">Descripción</th></tr></thead><tbody>${rows}</tbody></table>`;
  }

  private security(op: Json): string {
    const reqs: Json[] = op.security ?? this.doc.security ?? [];
    if (!reqs.length || reqs.every((r) => !Object.keys(r).length)) return '<p class="auth">Autenticación: ninguna (ruta pública).</p>';
    const one = reqs.map((r) =>
      Object.entries<string[]>(r)
        .map(
          ([name, scopes]) =>
            `<a href="${REFERENCE_PATH}#auth-${slug(name)}">${escapeHtml(name)}</a>${scopes.length ? ` (${scopes.map(escapeHtml).join(', ')})` : ''}`,
        )
        .join(' + '),
    );
    return `<p class="auth">Autenticación: ${one.join(' o ')}.</p>`;
  }

  private responses(op: Json): string {
    let html = '<h4>Respuestas</h4><dl class="responses">';
    for (const [status, raw] of Object.entries<Json>(op.responses ?? {})) {
      const r = this.resolve(raw);
      const kind = status.startsWith('2') ? 'ok' : status.startsWith('3') ? 'redirect' : 'err';
      html += `<dt><span class="status status-${kind}">${escapeHtml(status)}</span></dt><dd>${this.markdown(r.description)}`;
      const headers = Object.entries<Json>(r.headers ?? {});
      // Headers shared by many answers (components.headers) are described once, in the introduction.
      const shared = headers.filter(([, h]) => typeof h.$ref === 'string' && h.$ref.startsWith('#/components/headers/'));
      const own = headers.filter(([, h]) => !shared.some(([, x]) => x === h));
      if (shared.length) {
        html += `<p class="headers-title">Cabeceras comunes: ${shared.map(([name, h]) => `<a href="${REFERENCE_PATH}#header-${slug(h.$ref.split('/').pop())}"><code>${escapeHtml(name)}</code></a>`).join(', ')}</p>`;
      }
      if (own.length) {
        html += '<p class="headers-title">Cabeceras:</p><ul class="headers">';
        for (const [name, h] of own) {
          const header = this.resolve(h);
          html += `<li><code>${escapeHtml(name)}</code> (${this.typeLabel(header.schema ?? {})}): ${this.markdownInline(header.description)}</li>`;
        }
        html += '</ul>';
      }
      html += `${this.content(r.content)}</dd>`;
    }
    return `${html}</dl>`;
  }

  /** An operation's details: description, authentication, parameters, body, answers. */
  private operationBody(path: string, method: string, op: Json, shared: Json[]): string {
    const m = method.toUpperCase();
    let body = '';
    if (op.deprecated) body += '<p class="deprecated"><strong>Obsoleta:</strong> se retirará; vea la descripción.</p>';
    body += this.markdown(op.description);
    body += this.security(op);
    if (op['x-rate-limit-class']) body += `<p class="facts">Clase de límite de tasa: <code>${escapeHtml(op['x-rate-limit-class'])}</code></p>`;
    if (op.operationId) {
      body += `<p class="try"><a href="${escapeHtml(explorerLink(this.links.explorer, op.tags?.[0], op.operationId))}">Probar <span class="visually-hidden">${m} ${escapeHtml(path)}</span> en el explorador interactivo</a></p>`;
    }
    body += this.parameters(op, shared);
    if (op.requestBody) {
      const rb = this.resolve(op.requestBody);
      body += `<h4>Cuerpo de la solicitud${rb.required ? ' <span class="req">requerido</span>' : ''}</h4>${this.markdown(rb.description)}${this.content(rb.content)}`;
    }
    body += this.responses(op);
    return body;
  }

  private operations(): Array<[string, Op[]]> {
    const doc = this.doc;
    // Operations by their first tag, tags in the document's order, then in the order met.
    const groups = new Map<string, Op[]>();
    for (const t of doc.tags ?? []) groups.set(t.name, []);
    for (const [path, item] of Object.entries<Json>(doc.paths ?? {})) {
      for (const method of METHODS) {
        const op = item[method];
        if (!op) continue;
        const tag = op.tags?.[0] ?? 'Otras';
        if (!groups.has(tag)) groups.set(tag, []);
        groups.get(tag)!.push({ id: slug(op.operationId ?? `${method}-${path}`), path, method, op, shared: item.parameters ?? [] });
      }
    }
    return [...groups].filter(([, ops]) => ops.length);
  }

  /** An operation's line: method, path and summary. */
  private operationLine(o: Op, headingId?: string): string {
    return (
      `<h3${headingId ? ` id="${headingId}"` : ''}><span class="method method-${o.method}">${o.method.toUpperCase()}</span> ` +
      `<code class="path">${escapeHtml(o.path)}</code> <span class="summary">${this.markdownInline(o.op.summary)}</span></h3>`
    );
  }

  private shell(title: string, main: string, toc = ''): string {
    const info: Json = this.doc.info ?? {};
    const headerLinks = [
      { href: REFERENCE_PATH, text: 'Referencia' },
      { href: SCHEMAS_PATH, text: 'Esquemas' },
      { href: this.links.explorer, text: 'Explorador interactivo (Probar)' },
      { href: '/openapi.json', text: 'OpenAPI (JSON)' },
      ...(this.links.extra ?? []),
    ]
      .map((l) => `<li><a href="${escapeHtml(l.href)}">${escapeHtml(l.text)}</a></li>`)
      .join('');
    return (
      '<!doctype html>\n<html lang="es"><head><meta charset="utf-8"><meta name="viewport" content="width=device-width, initial-scale=1">' +
      `<title>${escapeHtml(title)} · ${escapeHtml(info.title ?? 'API')}</title>` +
      '<link rel="stylesheet" href="/docs/assets/docs.css"><link rel="icon" type="image/png" href="/docs/assets/favicon-32x32.png">' +
      '<script src="/docs/assets/docs.js" defer></script></head><body>' +
      '<a class="skip" href="#main">Saltar al contenido</a>' +
      `<header class="top"><p class="title">${escapeHtml(info.title ?? 'API')} <span class="version">versión ${escapeHtml(info.version ?? '')}</span> <span class="oas">OpenAPI ${escapeHtml(this.doc.openapi ?? '')}</span></p>` +
      `<nav aria-label="Documentos"><ul>${headerLinks}</ul></nav></header>` +
      (toc ? `<div class="layout"><nav class="toc" aria-label="Operaciones"><ul>${toc}</ul></nav>` : '<div class="layout single">') +
      `<main id="main">${main}</main></div></body></html>\n`
    );
  }

  /**
   * The index (/docs): introduction, authentication, shared headers and every operation's line. An
   * operation's details are its own page; docs.js loads them into the line when it is opened.
   */
  index(): string {
    const doc = this.doc;
    const info: Json = doc.info ?? {};
    const groups = this.operations();
    const tagInfo = new Map<string, Json>((doc.tags ?? []).map((t: Json) => [t.name, t]));
    const tagId = (tag: string) => `tag-${slug(tag)}`;

    let toc = '';
    for (const [tag, ops] of groups) {
      toc += `<li><a href="#${tagId(tag)}">${escapeHtml(tag)}</a><ul>`;
      for (const o of ops)
        toc += `<li><a href="#op-${o.id}"><span class="method method-${o.method}">${o.method.toUpperCase()}</span> ${escapeHtml(o.path)}</a></li>`;
      toc += '</ul></li>';
    }
    toc += `<li><a href="${SCHEMAS_PATH}">Esquemas</a></li>`;

    let sections = '';
    for (const [tag, ops] of groups) {
      sections += `<section class="tag" aria-labelledby="${tagId(tag)}"><h2 id="${tagId(tag)}">${escapeHtml(tag)}</h2>${this.markdown(tagInfo.get(tag)?.description)}`;
      for (const o of ops) {
        const href = `${OPERATIONS_PATH}/${o.id}`;
        sections +=
          `<article class="op" id="op-${o.id}" aria-labelledby="op-${o.id}-h"><details data-src="${href}"><summary>${this.operationLine(o, `op-${o.id}-h`)}</summary>` +
          `<div class="op-body"><p><a href="${href}">Ver la operación <span class="visually-hidden">${o.method.toUpperCase()} ${escapeHtml(o.path)}</span> completa</a></p></div></details></article>`;
      }
      sections += '</section>';
    }

    let auth = '';
    for (const [name, s] of Object.entries<Json>(doc.components?.securitySchemes ?? {})) {
      const how =
        s.type === 'http'
          ? `HTTP <code>${escapeHtml(s.scheme)}</code>${s.bearerFormat ? ` (<code>${escapeHtml(s.bearerFormat)}</code>)` : ''}`
          : s.type === 'apiKey'
            ? `clave en ${escapeHtml(s.in)} <code>${escapeHtml(s.name)}</code>`
            : escapeHtml(s.type);
      auth += `<dt id="auth-${slug(name)}"><code>${escapeHtml(name)}</code>: ${how}</dt><dd>${this.markdown(s.description)}</dd>`;
    }
    let commonHeaders = '';
    for (const [name, h] of Object.entries<Json>(doc.components?.headers ?? {})) {
      commonHeaders += `<dt id="header-${slug(name)}"><code>${escapeHtml(name)}</code> (${this.typeLabel(h.schema ?? {})})</dt><dd>${this.markdown(h.description)}</dd>`;
    }
    const servers = (doc.servers ?? [])
      .map((s: Json) => `<li><code>${escapeHtml(s.url)}</code>${s.description ? `: ${this.markdownInline(s.description)}` : ''}</li>`)
      .join('');

    const main =
      `<h1>${escapeHtml(info.title ?? 'API')}: referencia</h1>` +
      `<section aria-labelledby="intro"><h2 id="intro" class="visually-hidden">Introducción</h2>${this.markdown(info.description)}` +
      (servers ? `<h3>Servidores</h3><ul>${servers}</ul>` : '') +
      (auth ? `<h3>Autenticación</h3><dl class="defs">${auth}</dl>` : '') +
      (commonHeaders ? `<h3>Cabeceras comunes de las respuestas</h3><dl class="defs">${commonHeaders}</dl>` : '') +
      `</section>${sections}`;
    return this.shell('Referencia', main, toc);
  }

  /** Each operation's page (/docs/operations/<operationId>), by operation id: its line and its details in #op-body. */
  operationPages(): Map<string, string> {
    const pages = new Map<string, string>();
    for (const [, ops] of this.operations()) {
      for (const o of ops) {
        const main =
          `<article class="op op-page" aria-labelledby="op-${o.id}-h">${this.operationLine(o, `op-${o.id}-h`).replace(/^<h3/, '<h1').replace(/h3>$/, 'h1>')}` +
          `<div class="op-body" id="op-body">${this.operationBody(o.path, o.method, o.op, o.shared)}</div></article>`;
        pages.set(o.id, this.shell(`${o.method.toUpperCase()} ${o.path}`, main));
      }
    }
    return pages;
  }

  /** Every schema of components.schemas (/docs/schemas), each a disclosure. */
  schemasPage(): string {
    let schemas = '';
    for (const [name, s] of Object.entries<Json>(this.doc.components?.schemas ?? {})) {
      schemas +=
        `<article class="schema" id="schema-${slug(name)}" aria-labelledby="schema-${slug(name)}-h"><details><summary><h2 id="schema-${slug(name)}-h">${escapeHtml(name)}</h2></summary>` +
        `<div class="op-body">${this.markdown(s.description)}${this.schema(s)}</div></details></article>`;
    }
    return this.shell('Esquemas', `<h1>Esquemas</h1>${schemas}`);
  }
}

interface Op {
  id: string;
  path: string;
  method: string;
  op: Json;
  shared: Json[];
}

export interface ReferencePages {
  index: string;
  schemas: string;
  /** By operation id (letters, digits, `-`, `_`). */
  operations: Map<string, string>;
}

/** The reference's pages of `document` (an OpenAPI 3.1 document as served). */
export function renderReference(document: unknown, links: ReferenceLinks): ReferencePages {
  const r = new Renderer(document as Json, links);
  return { index: r.index(), schemas: r.schemasPage(), operations: r.operationPages() };
}
