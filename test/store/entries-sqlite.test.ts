/** Prompts and resources in the store on embedded SQLite. */
import { defineEntryContract } from './entry-contract.js';
import { sqliteTarget } from './store-targets.js';

defineEntryContract(sqliteTarget);
