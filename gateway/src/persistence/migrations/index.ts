import { Migration0001CompaniesAndApiKeys } from './0001-companies-and-api-keys.js';

/** Every gateway migration, in order. Append only. */
export const gatewayMigrations = [Migration0001CompaniesAndApiKeys];
