/**
 * A step of a revision that failed in a way its author can act on. `status` is where the
 * revision ends; `message` becomes its status_message and names the step, the command,
 * its exit code and the last lines it printed (see `commandFailure`).
 */
export class StepFailure extends Error {
  constructor(
    readonly status: "CREATE_FAILED" | "BUILD_FAILED" | "DEPLOY_FAILED",
    message: string,
  ) {
    super(message);
    this.name = "StepFailure";
  }
}

/** The job was stopped from outside (interrupted, deleted, lease lost): no status to write. */
export class JobStopped extends Error {
  constructor(reason: string) {
    super(reason);
    this.name = "JobStopped";
  }
}

/** "<step> failed: `<command>` exited with code N. Last lines: ..." */
export function commandFailure(
  status: StepFailure["status"],
  step: string,
  command: string,
  outcome: { code: number | null; signal: NodeJS.Signals | null; timedOut?: boolean },
  tail: readonly string[],
  advice?: string,
): StepFailure {
  const how = outcome.timedOut
    ? "did not finish in time and was stopped"
    : outcome.signal
      ? `was killed by ${outcome.signal}`
      : `exited with code ${outcome.code}`;
  const lines = tail.length ? `\nLast lines of its output:\n${tail.map((l) => `  ${l}`).join("\n")}` : " It printed nothing.";
  return new StepFailure(status, `${step} failed: \`${command}\` ${how}.${advice ? ` ${advice}` : ""}${lines}`);
}
