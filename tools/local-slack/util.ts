// Small argument helpers shared by the local Slack double's modules (reading form/JSON arguments as Slack does).

export function isRecord(value: unknown): value is Record<string, unknown> {
  return typeof value === "object" && value !== null && !Array.isArray(value);
}

/** A string argument (numbers are stringified as Slack would receive them in a form body). */
export function str(value: unknown): string | undefined {
  if (typeof value === "string") return value;
  if (typeof value === "number" || typeof value === "boolean") return String(value);
  return undefined;
}

export function nonEmpty(value: unknown): string | undefined {
  const s = str(value);
  return s === undefined || s === "" ? undefined : s;
}

export function textField(obj: unknown): string | undefined {
  return isRecord(obj) && typeof obj.text === "string" ? obj.text : undefined;
}

export function clone<T>(value: T): T {
  return structuredClone(value);
}

export function truncate(s: string, n: number): string {
  return s.length > n ? `${s.slice(0, n)}…` : s;
}

/** The conversation type by id prefix: D = DM, G = private channel, else public channel. */
export function channelKind(channel: string): "channels" | "groups" | "im" {
  if (channel.startsWith("D")) return "im";
  if (channel.startsWith("G")) return "groups";
  return "channels";
}
