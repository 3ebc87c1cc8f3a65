/**
 * The span of a run's relay on one instance (`relay run`): from the moment this instance
 * follows the run to its final message, or to its hand-over. A new run's is a child of the
 * Slack request that started it. A run taken over (after a restart, or from an instance that
 * died) continues the same trace from the `traceparent` its record keeps, with a link to that
 * request; a run recorded while tracing was off starts a trace of its own. Its status says how
 * the run ended here: `completed`, `failed`, `stopped`, `error`, or `handed_over`/`forgotten`.
 */
import { context, trace } from "@opentelemetry/api";
import { ATTR, continuing, failed, SpanKind, startSpan, withTeam } from "./spans.ts";

export interface RelaySpan {
  /** Runs `fn` in the span: the run's service requests and Slack calls are its children. */
  run<T>(fn: () => T): T;
  /** The current span (a Stop pressed in Slack, in a trace of its own) links to this one. */
  linkHere(): void;
  /** How the run ended here (its final state, shown in Slack). */
  ended(status: string): void;
  /** Ends the span; `otherwise` is its status when the run did not end here. */
  end(otherwise: string): void;
}

export function startRelaySpan(run: {
  readonly teamId: string;
  readonly channelId: string;
  readonly runId: string;
  /** How the relay began: "new", "resumed", "quarantined". */
  readonly start: string;
  readonly traceparent?: string | undefined;
}): RelaySpan {
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
    run: (fn) => context.with(within, () => withTeam(run.teamId, fn)),
    linkHere() {
      const current = trace.getActiveSpan();
      if (current && current !== span) current.addLink({ context: span.spanContext() });
    },
    ended(s) {
      status = s;
    },
    end(otherwise) {
      span.setAttribute(ATTR.runStatus, status ?? otherwise);
      // The service's run failed, or following it did.
      if (status === "failed" || status === "error") failed(span, undefined, status);
      span.end();
    },
  };
}
