import { randomBytes } from 'node:crypto';

/** Ids of the webhook's records: a kind prefix and random hex. */
export const newEndpointId = () => `we_${randomBytes(12).toString('hex')}`;
export const newDeliveryId = () => `whd_${randomBytes(12).toString('hex')}`;
export const newPingEventId = () => `evt_${randomBytes(16).toString('hex')}`;
