import { composeInertApp } from './served-document.js';
import { Ajv2020 } from 'ajv/dist/2020.js';
import addFormatsModule from 'ajv-formats';
import { ERRORS } from '@wallet/platform';
import { recordedExamples } from './examples.js';

const addFormats = addFormatsModule as unknown as (ajv: Ajv2020) => Ajv2020;
type Json = Record<string, any>;

/**
 * Operations whose request body or 2xx JSON answer has no recorded example, and why. Anything not
 * listed here must have one: `npm run openapi:examples` records them from the e2e suites.
 */
const WITHOUT_EXAMPLE: Record<string, string> = {
  'getOpenApiDocument 200': 'the answer is this document itself',
  'getAsyncApiDocument 200': 'the answer is the AsyncAPI document, served whole',
};

const METHODS = ['get', 'put', 'post', 'delete', 'patch'] as const;
const DOC_ID = 'https://wallet.test/openapi.json';
const pointer = (...keys: string[]) => keys.map((k) => '/' + encodeURIComponent(k.replace(/~/g, '~0').replace(/\//g, '~1'))).join('');

/** One example attached to the document, with the schema it must match (a JSON pointer into the document). */
interface Attached {
  where: string;
  schemaAt: string;
  value: unknown;
}

describe('OpenAPI examples (recorded from real answers, error codes from the catalogue)', () => {
  const gw = composeInertApp();
  afterAll(() => gw.close());
  const doc = gw.openApiDocument() as Json;
  const recorded = recordedExamples();

  const ajv = addFormats(new Ajv2020({ allErrors: true, strictSchema: true, strictTypes: false, strictTuples: false, strictRequired: false }));
  ajv.addVocabulary(['example', 'discriminator', 'xml', 'externalDocs', 'x-default']);
  ajv.addVocabulary([
    'openapi',
    'info',
    'jsonSchemaDialect',
    'servers',
    'paths',
    'webhooks',
    'components',
    'security',
    'tags',
    ...Object.keys(doc).filter((k) => k.startsWith('x-')),
  ]);
  ajv.addSchema({ ...doc, $id: DOC_ID });
  // One validator per schema: many answers share an error schema, compiled once.
  const validators = new Map<string, ReturnType<typeof ajv.compile>>();
  const problemsOf = (schemaAt: string, value: unknown): string[] => {
    const schema = schemaAt
      .slice(1)
      .split('/')
      .reduce((o: any, k) => o?.[decodeURIComponent(k).replace(/~1/g, '/').replace(/~0/g, '~')], doc);
    const key = JSON.stringify(schema);
    let validate = validators.get(key);
    if (!validate) {
      validate = ajv.compile({ $ref: `${DOC_ID}#${schemaAt}` });
      validators.set(key, validate);
    }
    return validate(value) ? [] : (validate.errors ?? []).map((e) => `${e.instancePath || '(root)'} ${e.message}`);
  };

  /** The value of a media type's example, or of each of its examples (`$ref`s to #/components/examples followed). */
  const valuesOf = (media: Json, at: string): Array<{ where: string; value: unknown }> => {
    const out: Array<{ where: string; value: unknown }> = [];
    if ('example' in media) out.push({ where: at, value: media.example });
    for (const [name, ex] of Object.entries<Json>(media.examples ?? {})) {
      const resolved = typeof ex.$ref === 'string' ? doc.components.examples[ex.$ref.replace('#/components/examples/', '')] : ex;
      if (!resolved) throw new Error(`${at}/examples/${name}: unresolvable ${ex.$ref}`);
      out.push({ where: `${at}/examples/${name}`, value: resolved.value });
    }
    return out;
  };

  const attached: Attached[] = [];
  const missing: string[] = [];
  for (const [path, item] of Object.entries<Json>(doc.paths)) {
    for (const method of METHODS) {
      const op = item[method];
      if (!op) continue;
      const at = `${method.toUpperCase()} ${path} (${op.operationId})`;
      const body = op.requestBody?.content?.['application/json'];
      if (body) {
        const values = valuesOf(body, `${at} request`);
        if (values.length === 0 && !WITHOUT_EXAMPLE[`${op.operationId} request`]) missing.push(`${op.operationId} request`);
        for (const v of values) attached.push({ ...v, schemaAt: pointer('paths', path, method, 'requestBody', 'content', 'application/json', 'schema') });
      }
      for (const [status, response] of Object.entries<Json>(op.responses)) {
        const media = response.content?.['application/json'];
        if (!media) continue;
        const values = valuesOf(media, `${at} ${status}`);
        if (values.length === 0 && !WITHOUT_EXAMPLE[`${op.operationId} ${status}`]) missing.push(`${op.operationId} ${status}`);
        for (const v of values) attached.push({ ...v, schemaAt: pointer('paths', path, method, 'responses', status, 'content', 'application/json', 'schema') });
      }
    }
  }
  for (const [name, response] of Object.entries<Json>(doc.components.responses ?? {})) {
    const media = response.content?.['application/json'];
    if (!media) continue;
    for (const v of valuesOf(media, `components.responses.${name}`))
      attached.push({ ...v, schemaAt: pointer('components', 'responses', name, 'content', 'application/json', 'schema') });
  }

  it('attaches examples to many operations, and every one matches the schema it is attached to', () => {
    expect(attached.length).toBeGreaterThan(500);
    const wrong = attached.map((a) => ({ where: a.where, problems: problemsOf(a.schemaAt, a.value) })).filter((a) => a.problems.length);
    expect(wrong).toEqual([]);
  });

  it('the check is not vacuous: an example off its schema is caught', () => {
    const send = doc.paths['/transfers/send'].post;
    const schemaAt = pointer('paths', '/transfers/send', 'post', 'requestBody', 'content', 'application/json', 'schema');
    expect(problemsOf(schemaAt, send.requestBody.content['application/json'].example)).toEqual([]);
    expect(problemsOf(schemaAt, { ...send.requestBody.content['application/json'].example, amount: -5 })).not.toEqual([]);
    expect(problemsOf(schemaAt, { amount: 'cien' })).not.toEqual([]);
  });

  it('every JSON request body and every JSON answer has an example, but for the listed exceptions', () => {
    expect(missing).toEqual([]);
    // The exceptions are still real: a listed operation that now has an example (or is gone) is dropped from the list.
    for (const key of Object.keys(WITHOUT_EXAMPLE)) {
      const [operationId, status] = key.split(' ') as [string, string];
      const op = Object.values<Json>(doc.paths)
        .flatMap((item) => METHODS.map((m) => item[m]))
        .find((o) => o?.operationId === operationId);
      expect(`${key}: ${op ? 'declared' : 'gone'}`).toBe(`${key}: declared`);
      const media = status === 'request' ? op.requestBody?.content?.['application/json'] : op.responses[status]?.content?.['application/json'];
      expect(`${key}: ${media && !('example' in media) && !media.examples ? 'without example' : 'has one'}`).toBe(`${key}: without example`);
    }
  });

  it('every error status an operation declares has one example, named by a code it answers with', () => {
    const gaps: string[] = [];
    for (const [path, item] of Object.entries<Json>(doc.paths)) {
      for (const method of METHODS) {
        const op = item[method];
        if (!op) continue;
        for (const [status, response] of Object.entries<Json>(op.responses)) {
          if (Number(status) < 400) continue;
          const media = response.content?.['application/json'];
          const codes = [...String(response.description).matchAll(/`([A-Z_]+)`/g)].map((m) => m[1]!).filter((c) => c in ERRORS);
          if (!codes.length) continue; // an answer of the operation's own (e.g. resolve-key's 422 found:false): recorded, see above
          const named = Object.keys(media?.examples ?? {});
          if (named.length !== 1 || !codes.includes(named[0]!))
            gaps.push(`${method.toUpperCase()} ${path} ${status}: ${codes.join(',')} vs ${named.join(',')}`);
        }
      }
    }
    expect(gaps).toEqual([]);
    // The catalogue's message, in Spanish, as the server answers it.
    const catalogue = Object.values<Json>(doc.components.examples);
    expect(catalogue.length).toBeGreaterThan(10);
    for (const ex of catalogue) expect(ex.value.message).toBe(ERRORS[ex.value.error as keyof typeof ERRORS].message);
    expect(doc.components.examples.Error_ROUTE_NOT_FOUND.value).toEqual({ error: 'ROUTE_NOT_FOUND', message: ERRORS.ROUTE_NOT_FOUND.message });
  });

  it('examples.json names only operations and statuses the document declares, with a JSON body there', () => {
    const byId = new Map<string, Json>();
    for (const item of Object.values<Json>(doc.paths)) for (const m of METHODS) if (item[m]) byId.set(item[m].operationId, item[m]);
    const stale: string[] = [];
    for (const [operationId, entry] of Object.entries(recorded)) {
      const op = byId.get(operationId);
      if (!op) {
        stale.push(`${operationId}: no such operation`);
        continue;
      }
      if (entry.request !== undefined && !op.requestBody?.content?.['application/json'])
        stale.push(`${operationId}: a request example, but no JSON request body`);
      for (const status of Object.keys(entry.responses ?? {}))
        if (!op.responses[status]?.content?.['application/json']) stale.push(`${operationId} ${status}: not a declared JSON answer`);
    }
    expect(stale).toEqual([]);
    expect(Object.keys(recorded).length).toBeGreaterThan(0);
  });

  it('POST /transfers/send shows a send the server accepts, and the 201 it got', () => {
    const send = doc.paths['/transfers/send'].post;
    expect(send.requestBody.content['application/json'].example).toEqual(recorded.sendTransfer!.request);
    expect(send.responses['201'].content['application/json'].example).toMatchObject({ status: expect.any(String), id: expect.any(String) });
  });
});
