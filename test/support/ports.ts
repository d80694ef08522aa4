export { freePort } from '@wallet/platform/testing';
