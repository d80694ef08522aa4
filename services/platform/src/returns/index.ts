export * from './return-machine.js';
export * from './ports.js';
export * from './return-store.js';
export * from './return-saga.js';
export * from './grpc.js';
