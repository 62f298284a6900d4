/**
 * What /readyz answers: every part of the process that must be usable for it to take traffic
 * (store, read models, keyring, listeners, Kafka), each able to say why it is not.
 */
export interface Readiness {
  /** A check returns undefined when its part is usable, or the reason it is not. */
  add(name: string, check: () => string | undefined): void;
  isReady(): boolean;
  /** The reasons the process is not ready now; empty when it is. */
  causes(): string[];
  /** True once the process has been ready at least once: it finished starting. */
  hasStarted(): boolean;
}

export function createReadiness(): Readiness {
  const checks = new Map<string, () => string | undefined>();
  let started = false;
  const causes = () => [...checks.values()].flatMap((check) => check() ?? []);
  return {
    add: (name, check) => {
      checks.set(name, check);
    },
    causes,
    isReady: () => {
      const ready = causes().length === 0;
      if (ready) started = true;
      return ready;
    },
    hasStarted: () => started,
  };
}
