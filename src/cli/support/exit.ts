/**
 * Exit codes of the control-plane commands (documented in docs/control-plane.md, the CLI section), so a
 * CI job can tell a failed build from a server it cannot reach.
 */
export const EXIT = {
  ok: 0,
  /** The revision failed (*_FAILED), or the server refused the request (4xx other than 401/403). */
  failed: 1,
  /** The command line was wrong. */
  usage: 2,
  /** The wait's --timeout passed, or the revision's server did not get ready in time. */
  timeout: 3,
  /** The revision was interrupted or superseded (INTERRUPTED, SKIPPED). */
  interrupted: 4,
  /** The server cannot be reached, or refuses the credentials (401, 403). */
  unreachable: 5,
  /** Ctrl-C stopped the waiting (the shell's 128 + SIGINT). */
  stopped: 130,
} as const;

export type ExitCode = (typeof EXIT)[keyof typeof EXIT];

/** A mistake in the command line: exit 2. */
export class UsageError extends Error {
  override name = "UsageError";
}

/** A failure already explained in its message, with the exit code it ends with. */
export class CliFailure extends Error {
  override name = "CliFailure";
  constructor(
    message: string,
    readonly exitCode: ExitCode = EXIT.failed,
  ) {
    super(message);
  }
}

/** The exit codes as `--help` of the waiting commands shows them. */
export const EXIT_CODES_HELP = `
Exit codes:
  0    deployed
  1    the revision failed (*_FAILED: its status_message and log tail are printed), or the server refused the request
  2    usage error
  3    timeout: --timeout passed, or the agent did not get ready within the control plane's readiness timeout
  4    the revision was interrupted or superseded (INTERRUPTED, SKIPPED)
  5    cannot reach the server, or it refuses the API key or workspace
  130  Ctrl-C stopped the waiting (the revision goes on on the server)`;
