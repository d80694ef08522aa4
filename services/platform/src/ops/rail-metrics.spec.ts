import { metricsRegistry } from './metrics.js';
import { railOutcome, startRailCall } from './rail-metrics.js';

const series = async (line: string) => {
  const found = (await metricsRegistry.metrics()).split('\n').find((l) => l.startsWith(`${line} `));
  return found === undefined ? 0 : Number(found.slice(line.length + 1));
};

describe('provider call metrics (wallet_rail_*)', () => {
  it('counts 2xx and the listed answers as ok, other 4xx as refused, 5xx, 408, 429 and no answer as error', () => {
    expect([200, 201, 204].map((s) => railOutcome(s))).toEqual(['ok', 'ok', 'ok']);
    expect(railOutcome(404, [404])).toBe('ok');
    expect([400, 404, 409, 422].map((s) => railOutcome(s))).toEqual(['refused', 'refused', 'refused', 'refused']);
    expect([500, 502, 503, 408, 429, undefined].map((s) => railOutcome(s))).toEqual(['error', 'error', 'error', 'error', 'error', 'error']);
  });

  it('times each call once and counts it by rail, operation and outcome, even when ended twice', async () => {
    const line = (outcome: string) => `wallet_rail_requests_total{rail="SPEC",operation="probe",outcome="${outcome}"}`;
    const timed = 'wallet_rail_request_duration_seconds_count{rail="SPEC",operation="probe"}';
    const a = startRailCall('SPEC', 'probe');
    a.end(201);
    a.end(500);
    startRailCall('SPEC', 'probe').end(undefined);
    startRailCall('SPEC', 'probe').end(409, [409]);
    expect([await series(line('ok')), await series(line('error')), await series(line('refused')), await series(timed)]).toEqual([2, 1, 0, 3]);
  });
});
