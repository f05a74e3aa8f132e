/** The store contract against PostgreSQL (a database of its own, dropped afterwards). */
import { defineStoreContract } from './store-contract.js';
import { postgresTarget } from './store-targets.js';

defineStoreContract(postgresTarget);
