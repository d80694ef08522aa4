// The product's processes for local runs: one entry per process, in start order.
// Ports are the CONTRACT §1 defaults; every one can be overridden through the environment.
export const processes = [
  {
    name: 'ledger',
    dir: 'services/ledger',
    migrate: 'dist/cli/migrate.js',
    main: 'dist/main.js',
    ready: () => `http://127.0.0.1:${process.env.LEDGER_OPS_PORT ?? 9101}/readyz`,
  },
  {
    name: 'gateway',
    dir: 'gateway',
    migrate: 'dist/cli/migrate.js',
    main: 'dist/main.js',
    ready: () => `http://127.0.0.1:${process.env.GATEWAY_OPS_PORT ?? 9100}/readyz`,
  },
];
