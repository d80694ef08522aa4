import { type Database } from '@wallet/platform';
import type { TransferStore } from './ports.js';
/** Reports the live sagas of this database at scrape time until the returned function is called. */
export declare function watchSagaStates(db: Database): () => void;
/** Counts the states sends reach, around the store's inserts and transitions (nothing else changes). */
export declare function meterTransferStore<S extends TransferStore>(store: S): S;
