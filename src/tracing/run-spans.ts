/**
 * A run's relay on one instance (`relay run`) to its final message or hand-over: a child of the
 * Slack request that started it, or for a run taken over in (and linked to) its record's trace.
 * Its status: `completed`, `failed`, `stopped`, `error`, `handed_over` or `forgotten`.
 */
import { context, trace } from "@opentelemetry/api";
import { ATTR, continuing, failed, SpanKind, startSpan, withTeam } from "./spans.ts";

export type RelaySpan = ReturnType<typeof startRelaySpan>;

export function startRelaySpan(run: {
  readonly teamId: string;
  readonly channelId: string;
  readonly runId: string;
  /** How the relay began: "new", "resumed", "quarantined". */
  readonly start: string;
  readonly traceparent?: string | undefined;
}) {
  const { parent, links } =
    run.start === "new" ? { parent: context.active(), links: [] } : continuing(run.traceparent);
  const { span, context: within } = startSpan(
    "relay run",
    {
      kind: SpanKind.INTERNAL,
      links,
      attributes: {
        [ATTR.team]: run.teamId,
        [ATTR.channel]: run.channelId,
        [ATTR.runId]: run.runId,
        [ATTR.runStart]: run.start,
      },
    },
    parent,
  );
  let status: string | undefined;
  return {
    /** Runs `fn` in the span: the run's service requests and Slack calls are its children. */
    run: <T>(fn: () => T): T => context.with(within, () => withTeam(run.teamId, fn)),
    /** The current span (a Stop pressed in Slack, in a trace of its own) links to this one. */
    linkHere(): void {
      const current = trace.getActiveSpan();
      if (current && current !== span) current.addLink({ context: span.spanContext() });
    },
    /** How the run ended here (its final state, shown in Slack). */
    ended(s: string): void {
      status = s;
    },
    /** Ends the span; `otherwise` is its status when the run did not end here. */
    end(otherwise: string): void {
      span.setAttribute(ATTR.runStatus, status ?? otherwise);
      // The service's run failed, or following it did.
      if (status === "failed" || status === "error") failed(span, undefined, status);
      span.end();
    },
  };
}
