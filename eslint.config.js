// ESLint flat config: the house rules that run (docs/architecture.md "Rules the code keeps").
// `npm run lint` checks; Prettier owns the layout (eslint-config-prettier, last, turns off what it formats).
import { readdirSync, statSync } from 'node:fs';
import js from '@eslint/js';
import { defineConfig } from 'eslint/config';
import prettier from 'eslint-config-prettier';
import { createNodeResolver, importX } from 'eslint-plugin-import-x';
import globals from 'globals';
import tseslint from 'typescript-eslint';

const root = import.meta.dirname; // zone paths are relative to the repository root, wherever eslint runs
const services = readdirSync(`${root}/services`).filter((s) => statSync(`${root}/services/${s}`).isDirectory());

// Layers of one service (CONVENTIONS.md "Layout of one service"): the use cases name their ports and
// never reach the adapters that implement them; the domain depends on nothing but itself.
const serviceZones = services.flatMap((s) => {
  const src = `./services/${s}/src`;
  return [
    {
      target: `${src}/app`,
      from: [`${src}/persistence`, `${src}/adapters`, `${src}/grpc`],
      message: 'app/ names its ports (ports.ts); persistence, adapters and grpc implement them.',
    },
    {
      target: `${src}/domain`,
      from: [`${src}/app`, `${src}/persistence`, `${src}/adapters`, `${src}/grpc`],
      message: 'domain/ depends on nothing outside itself (habit 1).',
    },
  ];
});

// ---- Gateway zones -------------------------------------------------------------------------------
// gateway/README.md "Add an endpoint": api/<area>/ (routes, schemas, presenters) over app/ (the gateway's
// use cases), auth/ and audit/, which sit over persistence/ (the only SQL); clients/ (gRPC) and http/ (the
// framework) know no area. Only compose.ts lists the routes (the no-restricted-imports block below).
const gw = './gateway/src';
const gatewayZones = [
  {
    target: [`${gw}/auth`, `${gw}/audit`],
    from: [`${gw}/app`, `${gw}/api`, `${gw}/http`, `${gw}/clients`],
    message: 'gateway auth/ and audit/ sit below the routes and use cases: they import nothing from app/, api/, http/ or clients/.',
  },
  { target: `${gw}/persistence`, from: [`${gw}/api`, `${gw}/http`, `${gw}/clients`], message: 'gateway stores know tables, not HTTP or gRPC.' },
  {
    target: `${gw}/clients`,
    from: [`${gw}/api`, `${gw}/app`, `${gw}/auth`, `${gw}/audit`, `${gw}/http`, `${gw}/persistence`],
    message: 'a gRPC client knows its service only.',
  },
  {
    target: `${gw}/http`,
    from: [`${gw}/api`, `${gw}/app`, `${gw}/clients`],
    message: 'gateway http/ is the framework: it knows no area, use case or service.',
  },
  { target: `${gw}/app`, from: [`${gw}/http`], message: 'gateway use cases take a call context, not an HTTP request.' },
  {
    target: `${gw}/app`,
    from: [`${gw}/api/**`],
    except: ['**/presenters.ts'],
    message: "gateway use cases may render with an area's presenters, never import its routes or schemas.",
  },
  { target: `${gw}/api`, from: [`${gw}/persistence`], message: 'an API area reaches data through app/ or auth/, never a store.' },
];
// ---- end of gateway zones -------------------------------------------------------------------------

// Habit 1: domain/ imports no transport, ORM, bus or I/O.
const domainForbidden = [
  '@mikro-orm/*',
  '@grpc/*',
  '@nats-io/*',
  'pg',
  'pg-*',
  'ioredis',
  'koa',
  'koa-*',
  '@koa/*',
  'rate-limiter-flexible',
  ...['net', 'http', 'https', 'http2', 'fs', 'fs/promises', 'child_process', 'dgram', 'tls'].flatMap((m) => [m, `node:${m}`]),
];

export default defineConfig(
  {
    ignores: ['**/node_modules/', '**/dist/', '**/coverage/', '.tools/', '**/.turbo/', 'proto/src/gen/', 'helm/', '**/*.d.ts'],
  },
  js.configs.recommended,
  tseslint.configs.recommended,
  {
    languageOptions: { ecmaVersion: 2023, sourceType: 'module', globals: { ...globals.node } },
    linterOptions: { reportUnusedDisableDirectives: 'error' },
    rules: {
      // Unused names are errors, except the conventional `_` prefix and `catch {}` without a binding.
      '@typescript-eslint/no-unused-vars': [
        'error',
        { argsIgnorePattern: '^_', varsIgnorePattern: '^_', caughtErrorsIgnorePattern: '^_', ignoreRestSiblings: true },
      ],
      // Late-bound handles (`let x; … x = make()`) read by closures written before the assignment are kept.
      'prefer-const': ['error', { ignoreReadBeforeAssign: true }],
      // Input checks find or strip control characters on purpose (text fields, CSV cells, PDF text).
      'no-control-regex': 'off',
      // A generator function cannot be an arrow: `self` names the instance it captures.
      '@typescript-eslint/no-this-alias': ['error', { allowedNames: ['self'] }],
    },
  },
  {
    files: ['**/*.spec.ts', '**/test/**', 'test/**'],
    rules: { '@typescript-eslint/no-explicit-any': 'off' }, // tests read untyped JSON answers and poke at internals
  },
  {
    files: ['gateway/dashboard/**/*.ts', 'gateway/src/openapi/assets/*.js'],
    languageOptions: { globals: { ...globals.browser } }, // pages that run in the browser
  },
  {
    files: ['gateway/src/openapi/assets/docs-init.js'],
    languageOptions: { globals: { SwaggerUIBundle: 'readonly' } }, // loaded by the page before this script
  },
  {
    files: ['**/*.cjs'],
    languageOptions: { sourceType: 'commonjs' },
    rules: { '@typescript-eslint/no-require-imports': 'off' }, // CommonJS files (Jest configs) require by design
  },
  {
    files: ['services/*/src/**/*.ts', 'gateway/src/**/*.ts'],
    ignores: ['**/*.spec.ts'], // a spec may wire a real adapter into the use case it tests
    plugins: { 'import-x': importX },
    settings: { 'import-x/resolver-next': [createNodeResolver({ extensions: ['.ts', '.js', '.mjs', '.json'], extensionAlias: { '.js': ['.ts', '.js'] } })] },
    rules: { 'import-x/no-restricted-paths': ['error', { basePath: root, zones: [...serviceZones, ...gatewayZones] }] },
  },
  {
    files: ['gateway/src/**/*.ts'],
    ignores: ['gateway/src/compose.ts', '**/*.spec.ts'],
    rules: {
      'no-restricted-imports': [
        'error',
        {
          patterns: [
            { group: ['**/*.routes.js'], message: 'Only compose.ts lists the routes: share what an area needs through its schemas.ts or presenters.ts.' },
          ],
        },
      ],
    },
  },
  {
    files: ['services/*/src/domain/**/*.ts'],
    rules: {
      'no-restricted-imports': [
        'error',
        { patterns: [{ group: domainForbidden, message: 'domain/ imports no transport, ORM, bus or I/O (CONVENTIONS.md habit 1).' }] },
      ],
    },
  },
  prettier,
);
