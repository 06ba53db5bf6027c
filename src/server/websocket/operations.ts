/** Each WebSocket operation, ended when completed, superseded or closed: graphql-ws 6.4 lets a reused id steal one. */
type Stream = AsyncIterable<unknown> & { return?: () => unknown };

export class Operation {
  readonly #aborter = new AbortController();
  readonly signal = this.#aborter.signal;
  #stream: Stream | undefined;
  ended = false;
  /** A newer subscribe message took this operation's id. */
  superseded = false;

  /** `settled` is called once, when the operation stops executing: it ended, or became a stream. */
  constructor(private readonly settled: () => void = () => {}) {}

  get streaming(): boolean {
    return this.#stream !== undefined && !this.ended;
  }

  get executing(): boolean {
    return this.#stream === undefined && !this.ended;
  }

  attach(stream: Stream): void {
    if (this.executing) this.settled();
    this.#stream = stream;
    if (this.ended) endStream(stream);
  }

  end(superseded = false): void {
    this.superseded ||= superseded;
    if (this.ended) return;
    if (this.executing) this.settled();
    this.ended = true;
    this.#aborter.abort();
    if (this.#stream) endStream(this.#stream);
  }
}

/** Frees the stream's resources (a live subscription slot) in a later microtask; nobody to tell of a failure. */
function endStream(stream: Stream): void {
  void Promise.resolve()
    .then(() => stream.return?.())
    .catch(() => undefined);
}

export type ExecutionLimits = { readonly perConnection: number; readonly total: number };

export class ConnectionOperations {
  readonly #byId = new Map<string, Operation>();
  /** graphql-ws's hooks name a subscribe message by its payload object. */
  readonly #byPayload = new WeakMap<object, Operation>();
  #executing = 0;

  /** `all` counts the executing operations of every connection sharing it. */
  constructor(
    private readonly limits: ExecutionLimits,
    private readonly all: { executing: number },
  ) {}

  /** Why another operation may not start executing now, if it may not: it is refused, never made to wait. */
  get executionRefusal(): string | undefined {
    const { perConnection, total } = this.limits;
    if (this.#executing >= perConnection) {
      return `A WebSocket connection runs at most ${perConnection} operations at once; send this one when another has finished.`;
    }
    if (this.all.executing >= total) return 'The gateway is running too many WebSocket operations at once; retry later.';
    return undefined;
  }

  /** graphql-ws closes the socket (4409) on a subscribe for an active id, so an earlier one of this id was completed: it ends. */
  start(id: string, payload: object): Operation {
    this.#byId.get(id)?.end(true);
    this.#executing += 1;
    this.all.executing += 1;
    const operation = new Operation(() => {
      this.#executing -= 1;
      this.all.executing -= 1;
    });
    this.#byId.set(id, operation);
    this.#byPayload.set(payload, operation);
    return operation;
  }

  complete(id: string, payload: object): Promise<never> | undefined {
    const operation = this.#byPayload.get(payload);
    if (operation?.superseded) return neverAnswered();
    if (operation) this.forget(id, operation);
    return undefined;
  }

  forget(id: string, operation: Operation): void {
    if (this.#byId.get(id) === operation) this.#byId.delete(id);
    operation.end();
  }

  endAll(): void {
    for (const operation of this.#byId.values()) operation.end();
    this.#byId.clear();
  }

  /** Streams still open: close() waits until graphql-ws has sent their `complete`. */
  get streaming(): number {
    return [...this.#byId.values()].filter((operation) => operation.streaming).length;
  }
}

/** A superseded operation's hooks never return: graphql-ws would answer under (and drop) the newer one's id. */
export const neverAnswered = (): Promise<never> => new Promise<never>(() => undefined);
