// Regenerates the SDK from the gateway's OpenAPI document, in one command (after `npx turbo run build`):
//   npm run generate -w @wallet/client            the document the gateway composes (gateway/dist)
//   npm run generate -w @wallet/client -- URL     the document a running gateway serves (URL of /openapi.json)
//   node sdk/scripts/generate.mjs --check [URL]    writes nothing; exits 1 naming each file that differs
// Writes three committed files, so the package builds and packs without the gateway:
//   sdk/openapi.json                 the client API part of the document (scripts/document.mjs clientDocument)
//   sdk/src/generated/openapi.ts     its types, by openapi-typescript 7 with default options
//   sdk/src/generated/operations.ts  each operation's method, path and Idempotency-Key; the error codes
// test/e2e/sdk.test.ts fails when these differ from what this script would write from the served document.
import { existsSync, mkdirSync, readFileSync, writeFileSync } from 'node:fs';
import { dirname, join } from 'node:path';
import { fileURLToPath, pathToFileURL } from 'node:url';
import * as prettier from 'prettier';
import { clientDocument, renderOperations, renderTypes } from './document.mjs';

const sdk = join(dirname(fileURLToPath(import.meta.url)), '..');
const repo = join(sdk, '..');

/** The whole document as the gateway builds it, composed with inert dependencies (nothing is called). */
export async function gatewayDocument() {
  const { createApp } = await import(pathToFileURL(join(repo, 'gateway', 'dist', 'compose.js')).href);
  const { loadConfig } = await import(pathToFileURL(join(repo, 'gateway', 'dist', 'config.js')).href);
  const { createLogger } = await import('@wallet/platform');
  const gw = createApp({
    config: loadConfig({ NODE_ENV: 'test' }),
    log: createLogger('sdk-generate', 'silent'),
    db: {},
    ledger: {},
    transfer: {},
    deposit: {},
    collectKey: {},
    receipt: {},
    redis: {},
  });
  try {
    return gw.openApiDocument();
  } finally {
    await gw.close();
  }
}

/** The three files' paths and contents (formatted as the repository's Prettier settings say). */
export async function generatedFiles(fullDocument) {
  const doc = clientDocument(fullDocument);
  const format = async (text, file) => prettier.format(text, { ...(await prettier.resolveConfig(file)), filepath: file });
  const files = {
    [join(sdk, 'openapi.json')]: `${JSON.stringify(doc, null, 2)}\n`,
    [join(sdk, 'src', 'generated', 'openapi.ts')]: await renderTypes(doc),
    [join(sdk, 'src', 'generated', 'operations.ts')]: renderOperations(doc),
  };
  for (const file of Object.keys(files)) if (file.endsWith('.ts')) files[file] = await format(files[file], file);
  return files;
}

if (import.meta.url === pathToFileURL(process.argv[1]).href) {
  const args = process.argv.slice(2);
  const check = args.includes('--check');
  const url = args.find((a) => a !== '--check');
  const full = url ? await (await fetch(url)).json() : await gatewayDocument();
  let stale = 0;
  for (const [file, text] of Object.entries(await generatedFiles(full))) {
    const name = file.slice(repo.length + 1);
    if (check) {
      const now = existsSync(file) ? readFileSync(file, 'utf8') : undefined;
      if (now !== text) {
        stale++;
        console.log(`[sdk] ${name} differs from the document${url ? ` at ${url}` : ''}: run npm run generate -w @wallet/client`);
      }
      continue;
    }
    mkdirSync(dirname(file), { recursive: true });
    writeFileSync(file, text);
    console.log(`[sdk] wrote ${name} (${text.length} bytes)`);
  }
  if (check && !stale) console.log('[sdk] the generated files match the document');
  process.exit(stale ? 1 : 0); // exit explicitly: the composed app may hold timers that close() leaves to the process
}
