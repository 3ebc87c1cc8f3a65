// Rate-tier enforcement: per-method, per-team sliding one-minute windows; a call over its tier is
// answered 429 + Retry-After + "ratelimited", as Slack's rate-limits page describes.
import type { RateTier } from "./types.ts";

export class RateTiers {
  readonly #tiers = new Map<string, RateTier>();
  readonly #windows = new Map<string, number[]>();
  readonly #now: () => number;

  constructor(tiers: Record<string, RateTier>, now: () => number) {
    this.#now = now;
    for (const [method, tier] of Object.entries(tiers)) this.#tiers.set(method, tier);
  }

  /** Sets (or with undefined removes) a method's tier; every window starts afresh. */
  set(method: string, tier: RateTier | undefined): void {
    if (tier === undefined) this.#tiers.delete(method);
    else this.#tiers.set(method, tier);
    this.#windows.clear();
  }

  /** Returns Retry-After seconds when the call exceeds its tier, else records it and returns undefined. */
  check(method: string, team: string): number | undefined {
    const tier = this.#tiers.get(method);
    if (!tier) return undefined;
    const now = this.#now();
    const key = `${team}/${method}`;
    const window = (this.#windows.get(key) ?? []).filter((t) => t > now - 60_000);
    this.#windows.set(key, window);
    if (window.length >= tier.perMinute) {
      const oldest = window[0] ?? now;
      return Math.max(1, Math.ceil((oldest + 60_000 - now) / 1000));
    }
    window.push(now);
    return undefined;
  }
}
