// The Web API method registry: each family module exports a MethodFamily (method name → handler,
// token kind, scopes); methods/index.ts lists the families. A new family is one module + one line there.
import type { LimitErrorCodes } from "../limits.ts";
import type { LocalOAuth } from "../oauth.ts";
import type { Workspace } from "../state.ts";
import type { Caller, Tenancy } from "../tenancy.ts";
import type { SlackArgs } from "../types.ts";

/**
 * What a handler may use: the workspace state, the workspaces and their tokens, the app's
 * OAuth settings, the configured error codes and the clock.
 */
export interface MethodContext {
  readonly state: Workspace;
  readonly tenancy: Tenancy;
  readonly oauth: LocalOAuth;
  readonly codes: LimitErrorCodes;
  readonly now: () => number;
  /** Uninstalls the app from a workspace or organisation (see LocalSlack.uninstall). */
  readonly uninstall: (id: string) => void;
}

export interface SlackMethod {
  /**
   * Which token the method takes. "bot" (default): a bot token of an installed workspace, with
   * fault injection, rate tiers and scope checks. "app": the app-level token only
   * (apps.connections.open), none of those. "none": no token (oauth.v2.access), faults only.
   */
  token?: "bot" | "app" | "none";
  /** Scopes any one of which allows the call; a function when they depend on the arguments. */
  scopes?: readonly string[] | ((args: SlackArgs) => readonly string[]);
  /**
   * Returns the fields of the `{ ok: true, … }` answer or throws an ApiFailure. `caller` is who
   * the bot token speaks for (undefined for app-level and token-less methods).
   */
  handle: (
    args: SlackArgs,
    ctx: MethodContext,
    team: string,
    caller: Caller | undefined,
  ) => Record<string, unknown>;
}

export type MethodFamily = Readonly<Record<string, SlackMethod>>;

/** One lookup table from the families; a method defined twice is a programming error. */
export function buildRegistry(families: readonly MethodFamily[]): ReadonlyMap<string, SlackMethod> {
  const registry = new Map<string, SlackMethod>();
  for (const family of families) {
    for (const [name, method] of Object.entries(family)) {
      if (registry.has(name)) throw new Error(`local-slack: ${name} is defined twice`);
      registry.set(name, method);
    }
  }
  return registry;
}
