// A wait's sleep that news can cut short: mail an earlier look passed over
// (a concurrent wait had claimed it) may be taken now, so the listing the
// wait already holds is worth a look again at once, without asking the
// service - rather than at the next check, a second or more away.
export class Wakeup {
  #pending = false;
  #controller = new AbortController();
  readonly #unsubscribe: () => void;

  /** `watch` subscribes a callback to the news and returns its unsubscribe function. */
  constructor(watch: ((wake: () => void) => () => void) | undefined) {
    this.#unsubscribe =
      watch?.(() => {
        this.#pending = true;
        this.#controller.abort();
      }) ?? (() => {});
  }

  /** `outer`, cut short as well by news since the last `take()`. */
  signal(outer: AbortSignal | undefined): AbortSignal {
    return outer ? AbortSignal.any([outer, this.#controller.signal]) : this.#controller.signal;
  }

  /** True once for news since the last call, which it consumes. */
  take(): boolean {
    if (!this.#pending) return false;
    this.#pending = false;
    this.#controller = new AbortController();
    return true;
  }

  close(): void {
    this.#unsubscribe();
  }
}
