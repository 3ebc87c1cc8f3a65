// Answers one Web API call in Slack's order: unknown method, token, injected fault, rate tier,
// scope, unparsable body, then the method's handler.
import { authenticate, scopeFailure } from "./access.ts";
import type { Problem } from "./errors.ts";
import { ApiFailure, invalid } from "./errors.ts";
import type { Faults } from "./faults.ts";
import type { ApiRequest } from "./http.ts";
import type { MethodContext, SlackMethod } from "./methods/registry.ts";
import type { RateTiers } from "./rate-tiers.ts";
import type { Caller } from "./tenancy.ts";
import type { FaultSpec, RecordedCall, SlackArgs, SlackResponseBody } from "./types.ts";
import { str } from "./util.ts";

export interface ApiOutcome {
  status: number;
  response: SlackResponseBody;
  retryAfter?: number;
  fault?: RecordedCall["fault"];
  validation?: Problem;
  /** Who the call's bot token speaks for, once authenticated. */
  caller?: Caller;
}

export interface Dispatcher {
  readonly registry: ReadonlyMap<string, SlackMethod>;
  readonly context: MethodContext;
  readonly faults: Faults;
  readonly tiers: RateTiers;
  /** Granted scopes of the double's own token, or undefined for no scope checks. */
  readonly scopes: ReadonlySet<string> | undefined;
}

function unknownMethod(method: string): ApiOutcome {
  return {
    status: 200,
    response: {
      ok: false,
      error: "unknown_method",
      req_method: method,
      response_metadata: {
        messages: [`[ERROR] the local Slack double does not implement ${method}`],
      },
    },
  };
}

function injectedOutcome(injected: FaultSpec): ApiOutcome {
  const status =
    injected.status ??
    (injected.retryAfter !== undefined || injected.error === "ratelimited" ? 429 : 200);
  const outcome: ApiOutcome = {
    status,
    fault: "injected",
    response: { ok: false, error: injected.error, ...injected.extra },
  };
  if (status === 429) outcome.retryAfter = injected.retryAfter ?? 1;
  return outcome;
}

function run(
  method: SlackMethod,
  args: SlackArgs,
  ctx: MethodContext,
  team: string,
  caller: Caller | undefined,
): ApiOutcome {
  try {
    return { status: 200, response: { ok: true, ...method.handle(args, ctx, team, caller) } };
  } catch (error) {
    if (!(error instanceof ApiFailure)) throw error;
    const outcome: ApiOutcome = {
      status: 200,
      response: { ok: false, error: error.code, ...error.extra },
    };
    if (error.validation !== undefined) outcome.validation = error.validation;
    return outcome;
  }
}

export function answerApiCall(d: Dispatcher, name: string, request: ApiRequest): ApiOutcome {
  const method = d.registry.get(name);
  if (method === undefined) return unknownMethod(name);
  const state = d.context.state;
  const { caller, failure } = authenticate(
    method,
    request.token,
    state.appToken,
    d.context.tenancy,
  );
  if (failure) return { status: 200, response: failure };
  const outcome = answerAuthenticated(d, name, method, request, caller);
  return caller ? { ...outcome, caller } : outcome;
}

function answerAuthenticated(
  d: Dispatcher,
  name: string,
  method: SlackMethod,
  request: ApiRequest,
  caller: Caller | undefined,
): ApiOutcome {
  const { args, problem } = request;
  // Rate tiers and views count per workspace: the one named, else the token's.
  const team =
    str(args.team_id) ?? caller?.teamId ?? caller?.enterpriseId ?? d.context.state.teamId;
  // App-level methods (Socket Mode) take no bot faults, tiers or scopes.
  if (method.token === "app") return run(method, args, d.context, team, caller);
  const injected = d.faults.take(name, args);
  if (injected) return injectedOutcome(injected);
  if (method.token === "none") return run(method, args, d.context, team, caller);
  // Tier windows only count calls that got past authentication and injected faults.
  const retryAfter = d.tiers.check(name, team);
  if (retryAfter !== undefined) {
    const response = { ok: false, error: "ratelimited" };
    return { status: 429, retryAfter, fault: "ratelimited", response };
  }
  // A token installed through OAuth has the scopes asked for then; the double's own, the option's.
  const scopeProblem = scopeFailure(method, args, caller?.scopes ?? d.scopes);
  if (scopeProblem) return { status: 200, response: scopeProblem };
  if (problem) {
    const response = { ok: false, error: problem.error, ...invalid(problem).extra };
    return { status: 200, validation: problem, response };
  }
  return run(method, args, d.context, team, caller);
}
