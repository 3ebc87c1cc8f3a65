// How method handlers fail: an ApiFailure becomes Slack's `{ ok: false, error, response_metadata }` answer.

/** A payload problem: the Slack error code plus Slack-style detail. */
export interface Problem {
  error: string;
  message: string;
  pointer?: string;
}

/** Thrown by method handlers; turned into `{ ok: false, error }`. */
export class ApiFailure extends Error {
  readonly code: string;
  readonly extra: Record<string, unknown>;
  readonly validation: Problem | undefined;
  constructor(code: string, extra: Record<string, unknown> = {}, validation?: Problem) {
    super(code);
    this.code = code;
    this.extra = extra;
    this.validation = validation;
  }
}

/** A validation failure with Slack's `[ERROR] … [json-pointer:…]` response_metadata message. */
export function invalid(problem: Problem): ApiFailure {
  const pointer = problem.pointer === undefined ? "" : ` [json-pointer:${problem.pointer}]`;
  return new ApiFailure(
    problem.error,
    { response_metadata: { messages: [`[ERROR] ${problem.message}${pointer}`] } },
    problem,
  );
}

/** Throws the problem, if any, as a validation failure. */
export function check(problem: Problem | undefined): void {
  if (problem) throw invalid(problem);
}
