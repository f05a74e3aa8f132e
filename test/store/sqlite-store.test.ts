/** The store contract against embedded SQLite. */
import { defineStoreContract } from './store-contract.js';
import { sqliteTarget } from './store-targets.js';

defineStoreContract(sqliteTarget);
