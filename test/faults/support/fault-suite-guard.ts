/**
 * The fault files kill containers, control planes and the Docker engine: they
 * run only under vitest.faults.config.ts, which sets MCPHOST_FAULTS_SUITE=1.
 * Picked up by the main suite's glob by mistake, they skip instead.
 */
import { it } from 'vitest';

/** True inside `npm run test:faults` (vitest.faults.config.ts). */
export const IN_FAULT_SUITE = process.env.MCPHOST_FAULTS_SUITE === '1';

/** `it`, skipped outside the fault suite. */
export const faultIt = it.skipIf(!IN_FAULT_SUITE);
