/**
 * The public face of metrics/: what other folders may import (eslint.config.js holds the rule).
 */
export { Metrics } from './metrics.js';
