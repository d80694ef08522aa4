// CPU µs per request of the signed caller context (docs/benchmarks.md "Cost per send"), with the platform's build
// (services/platform/dist): the gateway's signature and a service's verification when every request
// carries a context of its own (a new principal each time: what every request cost before the
// reuse), and when requests of one principal share it (the signer's 30 s reuse and the verifier's
// cache). Process CPU, so WebCrypto's thread-pool work is counted.
// Usage: node test/bench/caller-context.mjs [requests per round]
import { generateKeyPairSync } from 'node:crypto';
import { resolve } from 'node:path';
import { pathToFileURL } from 'node:url';

const N = Number(process.argv[2] ?? 2000);
const root = resolve(import.meta.dirname, '..', '..');
const { CallerContextSigner, CallerContextVerifier } = await import(pathToFileURL(resolve(root, 'services/platform/dist/mesh/caller-context.js')).href);
const { privateKey, publicKey } = generateKeyPairSync('ed25519');
const profile = {
  nit: '900123456-7',
  name: 'Acme S.A.S.',
  ivaApplicable: true,
  multiSigThreshold: 0,
  counterpartyDailyLimitCents: 0n,
  counterpartyMonthlyLimitCents: 0n,
};
const principal = (i) => ({ kind: 'apikey', companyId: `co-${i}`, keyId: 'k1', scope: 'WRITE', profile });

async function cpuPerOp(fn) {
  const c0 = process.cpuUsage();
  for (let i = 0; i < N; i++) await fn(i);
  const c = process.cpuUsage(c0);
  return (c.user + c.system) / N;
}

const rows = [];
for (let round = 0; round < 3; round++) {
  const signer = new CallerContextSigner(privateKey);
  const verifier = new CallerContextVerifier(publicKey);
  const fresh = [];
  rows.push({
    round,
    'sign, a new principal each (µs)': await cpuPerOp(async (i) => {
      fresh[i] = await signer.sign(principal(`${round}-${i}`));
    }),
    'verify, a new token each (µs)': await cpuPerOp((i) => verifier.verify(fresh[i])),
    'sign, one principal (µs)': await cpuPerOp(() => signer.sign(principal('same'))),
    'verify, one token (µs)': await cpuPerOp(async () => verifier.verify(await signer.sign(principal('same')))),
  });
}
console.table(rows.map((r) => Object.fromEntries(Object.entries(r).map(([k, v]) => [k, typeof v === 'number' && k !== 'round' ? Number(v.toFixed(1)) : v]))));
