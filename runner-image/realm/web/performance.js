// @ts-check
/** `performance` for tool code: the invocation's clock, kept by the host (5 µs resolution). */
import { webCall, now } from '../bridge.js';
import { CONSTRUCTING, checkConstructing, once, platformClasses } from '../webidl.js';

/** This realm's `performance` and its class, created on first need. */
export const webPerformance = once(function () {
  class Performance {
    /** @param {unknown} [key] */
    constructor(key) {
      checkConstructing(key);
    }
    /** Milliseconds since the invocation started (5 µs resolution). */
    now() {
      return now();
    }
    /** When the invocation started, in ms since the epoch. */
    get timeOrigin() {
      const value = webCall('timeOrigin');
      return typeof value === 'number' ? value : 0;
    }
    toJSON() {
      return { timeOrigin: this.timeOrigin };
    }
  }
  platformClasses(Performance);
  return { performance: new Performance(CONSTRUCTING), Performance: Performance };
});
