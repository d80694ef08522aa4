// The names of the images `npm run test:images` builds, one source for the check and the chart's
// tests: each process's image is tagged as deploy/compose.yaml names it (`payments-wallet/<p>:local`)
// and as the Helm chart's default values render it (`<image.repository>/<p>:<appVersion>`).
import { readFileSync } from 'node:fs';
import { dirname, join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { parse } from 'yaml';

const REPO = join(dirname(fileURLToPath(import.meta.url)), '..', '..');

/** `<image.repository>/<process>:<image.tag or the chart's appVersion>`, as helm/wallet renders it by default. */
export function chartImage(process) {
  const values = parse(readFileSync(join(REPO, 'helm', 'wallet', 'values.yaml'), 'utf8'));
  const chart = parse(readFileSync(join(REPO, 'helm', 'wallet', 'Chart.yaml'), 'utf8'));
  return `${values.image.repository}/${process}:${values.image.tag || chart.appVersion}`;
}

/** The image deploy/compose.yaml runs for a process. */
export function composeImage(process) {
  const compose = parse(readFileSync(join(REPO, 'deploy', 'compose.yaml'), 'utf8'), { merge: true });
  return compose.services[process]?.image;
}
