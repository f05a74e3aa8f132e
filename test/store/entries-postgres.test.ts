/** Prompts and resources in the store on PostgreSQL. */
import { defineEntryContract } from './entry-contract.js';
import { postgresTarget } from './store-targets.js';

defineEntryContract(postgresTarget);
