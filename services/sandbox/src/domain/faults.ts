/** Outage switches for tests and demos; every switch starts `up`. */

export const FAULT_NAMES = ['directory', 'brebRail', 'achRail', 'pse', 'callbacks'] as const;
export type FaultName = (typeof FAULT_NAMES)[number];
export type FaultState = 'up' | 'down';
export type Faults = Record<FaultName, FaultState>;

export function allUp(): Faults {
  return { directory: 'up', brebRail: 'up', achRail: 'up', pse: 'up', callbacks: 'up' };
}
