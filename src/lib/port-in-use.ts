/**
 * A listener could not bind its port because something else holds it (`EADDRINUSE`). The entries
 * (src/main.ts, src/dev.ts, src/sandbox/main.ts) print its message as the one line of a failed start,
 * without a stack trace: it names the variable that sets the port.
 */
export class PortInUseError extends Error {
  override name = 'PortInUseError';
  /** The variable that sets the port. */
  readonly variable: string;
  readonly port: number;
  readonly host: string;

  /**
   * @param variable the variable that sets the port, e.g. `PORT`, `METRICS_PORT`, `SANDBOX_PORT`.
   * @param port the port asked for.
   * @param host the interface it was asked on.
   */
  constructor(variable: string, port: number, host: string) {
    super(
      `${variable}: port ${port} on ${host} is already in use: stop what listens there or set ${variable} to another port (0 picks a free one)`,
    );
    this.variable = variable;
    this.port = port;
    this.host = host;
  }
}

/** `error` as a {@link PortInUseError} when it is Node's `EADDRINUSE`, else `error` unchanged. */
export function listenError(error: unknown, variable: string, port: number, host: string): unknown {
  return (error as NodeJS.ErrnoException | undefined)?.code === 'EADDRINUSE'
    ? new PortInUseError(variable, port, host)
    : error;
}
