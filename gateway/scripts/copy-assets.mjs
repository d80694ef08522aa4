// Copies the non-TypeScript files the gateway reads at run time (the reference page's styles and script,
// the interactive console's page and init script, the AsyncAPI document, the recorded examples of the
// OpenAPI document) from src/ to dist/. Swagger UI itself is served from node_modules/swagger-ui-dist;
// the reference page's HTML is rendered at run time.
import { cpSync, existsSync } from 'node:fs';
import { dirname, join } from 'node:path';
import { fileURLToPath } from 'node:url';

const root = join(dirname(fileURLToPath(import.meta.url)), '..');
const assets = [
  ['src/openapi/assets', 'dist/openapi/assets'],
  // The examples recorded from real answers (npm run openapi:examples), attached to the document.
  ['src/openapi/examples.json', 'dist/openapi/examples.json'],
];
for (const [from, to] of assets) {
  const src = join(root, from);
  if (!existsSync(src)) throw new Error(`missing asset ${from}`);
  cpSync(src, join(root, to), { recursive: true });
}
