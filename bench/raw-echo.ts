/** The raw baseline of the benchmarks: an echo program over the same Docker stdio attach. */
import type { SandboxInstance } from '../control-plane/sandbox/driver.js';

/** Round trips over a raw echo instance: write a line, wait until it comes back whole. */
export function lineEcho(instance: SandboxInstance): { roundTrip(line: string): Promise<void> } {
  let waiting: { bytes: number; resolve(): void } | undefined;
  let received = 0;
  instance.onStdout((chunk) => {
    received += chunk.length;
    if (waiting && received >= waiting.bytes) {
      const done = waiting;
      waiting = undefined;
      received = 0;
      done.resolve();
    }
  });
  return {
    roundTrip(line: string): Promise<void> {
      return new Promise<void>((resolve, reject) => {
        const timer = setTimeout(
          () => reject(new Error('raw echo did not answer within 30 s')),
          30_000,
        );
        waiting = {
          bytes: Buffer.byteLength(line),
          resolve: () => {
            clearTimeout(timer);
            resolve();
          },
        };
        instance.write(line);
      });
    },
  };
}
