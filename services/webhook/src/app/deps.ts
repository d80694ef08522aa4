import type { SecretBox } from '@wallet/platform';
import type { AckFloorSource, DeliveryQueue, DeliveryWaker, EndpointStore, TargetGuard, WebhookSender } from './ports.js';

/** What the endpoint and delivery-log use cases are built from. */
export interface WebhookDeps {
  store: EndpointStore;
  /** Seals signing secrets at rest. */
  secrets: SecretBox;
  targets: TargetGuard;
  /** Woken after a use case committed new deliveries (a ping, a replay, an endpoint enabled again). */
  worker: DeliveryWaker;
}

/** What the delivery worker is built from; `now` is replaceable in tests. */
export interface WorkerDeps {
  queue: DeliveryQueue;
  /** How far each consumer has recorded its stream: a delivery goes out once every earlier event of its resource can be known. */
  floors: AckFloorSource;
  /** Opens the sealed signing secrets. */
  secrets: SecretBox;
  targets: TargetGuard;
  sender: WebhookSender;
  now: () => Date;
}

export function workerDeps(p: Omit<WorkerDeps, 'now'> & { now?: () => Date }): WorkerDeps {
  return { ...p, now: p.now ?? (() => new Date()) };
}
