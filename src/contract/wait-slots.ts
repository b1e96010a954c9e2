// Server-side waits come in a fixed number of slots with no queue (docs/CONTRACT.md):
// a wait that finds every slot taken is refused at once with `503
// too_many_waits`, because a queued wait would spend its caller's budget
// standing in line. The embedded server's long-poll and MCP tool, and the
// stdio proxy's MCP tool, each hold their own slots.
import { Refusal } from './refusal.js';

export class WaitSlots {
  readonly capacity: number;
  #inUse = 0;

  constructor(capacity: number) {
    this.capacity = capacity;
  }

  get inUse(): number {
    return this.#inUse;
  }

  /** A release function (idempotent), or undefined when every slot is taken. */
  tryTake(): (() => void) | undefined {
    if (this.#inUse >= this.capacity) return undefined;
    this.#inUse++;
    let released = false;
    return () => {
      if (released) return;
      released = true;
      this.#inUse--;
    };
  }

  /**
   * A release function, or the `too_many_waits` refusal when every slot is
   * taken. `instead` tells the caller what to do rather than wait.
   */
  take(instead: string): () => void {
    const release = this.tryTake();
    if (release) return release;
    throw new Refusal(503, 'too_many_waits', `Too many waits are in progress: all ${this.capacity} wait slots are taken, and waits are not queued. ${instead}`);
  }
}
