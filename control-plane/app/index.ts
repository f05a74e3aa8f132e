/**
 * The public face of app/: what other folders may import (eslint.config.js holds the rule).
 */
export { startApp } from './app.js';
