/**
 * Readiness: each dependency a node needs to take traffic reports its state, and the node is ready
 * when every required one is up. Checks are cheap (a flag, or one round trip bounded by a timeout)
 * because load balancers and orchestrators poll `/ready` every few seconds.
 */

/** One dependency's state as a check sees it. */
export interface CheckResult {
  readonly up: boolean;
  /** Sub-states shown as they are (SMPP links by name → state); never secrets. */
  readonly parts?: Readonly<Record<string, string>>;
}

export type Check = () => CheckResult | Promise<CheckResult>;

export interface DependencyState {
  readonly status: 'up' | 'down';
  readonly required: boolean;
  readonly parts?: Readonly<Record<string, string>>;
}

export interface ReadinessReport {
  readonly status: 'ready' | 'not_ready';
  readonly checks: Readonly<Record<string, DependencyState>>;
}

/** A check that has not answered within this is reported down (a hung Postgres is not ready). */
const CHECK_TIMEOUT_MS = 1_000;

function bounded(check: Check): Promise<CheckResult> {
  return new Promise<CheckResult>((resolve) => {
    const timer = setTimeout(() => resolve({ up: false }), CHECK_TIMEOUT_MS);
    const done = (r: CheckResult) => {
      clearTimeout(timer);
      resolve(r);
    };
    try {
      Promise.resolve(check()).then(done, () => done({ up: false }));
    } catch {
      done({ up: false });
    }
  });
}

export class Readiness {
  readonly #checks = new Map<string, { check: Check; required: boolean }>();

  /** Adds a dependency; `required: false` ones are reported but never make the node unready. */
  add(name: string, check: Check, opts: { required?: boolean } = {}): void {
    this.#checks.set(name, { check, required: opts.required ?? true });
  }

  /** Runs every check at once. */
  async report(): Promise<ReadinessReport> {
    const entries = [...this.#checks];
    const results = await Promise.all(entries.map(([, c]) => bounded(c.check)));
    const checks: Record<string, DependencyState> = {};
    let ready = true;
    entries.forEach(([name, { required }], i) => {
      const r = results[i] ?? { up: false };
      if (required && !r.up) ready = false;
      checks[name] = { status: r.up ? 'up' : 'down', required, ...(r.parts ? { parts: r.parts } : {}) };
    });
    return { status: ready ? 'ready' : 'not_ready', checks };
  }
}
