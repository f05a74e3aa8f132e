/**
 * The public face of dashboard/: what other folders may import (eslint.config.js holds the rule).
 */
export { createDashboardHandler } from './serve-dashboard.js';
