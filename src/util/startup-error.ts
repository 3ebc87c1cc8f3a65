/** The error that stops start-up with one line (no stack trace), for every part of the app. */
/** Start-up failed for a reason one line can tell (printed as it is, with no stack trace). */
export class StartupError extends Error {
  constructor(message: string) {
    super(message);
    this.name = "StartupError";
  }
}
