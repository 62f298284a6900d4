/**
 * The ports a process's listeners bound. A port variable may be 0 (TESSERA_PORT=0 and the like):
 * then the system picks a free port as the listener binds it, and only this knows which, so
 * whatever names the process's own address (the default TESSERA_PUBLIC_URL, /readyz) reads it
 * here, after the listeners are up, rather than from the configuration.
 */
export interface ListenerPorts {
  /** The public listener: v5, and v1 too unless TESSERA_LEGACY_PORT gives it its own. */
  readonly public?: number;
  /** The v1 listener of TESSERA_LEGACY_PORT, when set. */
  readonly legacy?: number;
  /** The admin listener; absent with TESSERA_ADMIN_PORT=off. */
  readonly admin?: number;
}

export interface Listeners {
  /** The ports bound so far: empty until the server has opened its listeners, and in a process that opens none. */
  ports(): ListenerPorts;
  /** Recorded by the server as each listener opens. */
  bound(listener: keyof ListenerPorts, port: number): void;
}

export function createListeners(): Listeners {
  const bound: { -readonly [K in keyof ListenerPorts]: number } = {};
  return {
    ports: () => ({ ...bound }),
    bound: (listener, port) => {
      bound[listener] = port;
    },
  };
}
