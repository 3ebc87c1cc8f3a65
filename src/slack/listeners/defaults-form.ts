/**
 * The defaults form (a person's, from App Home, or a channel's, from `/task settings`): opening
 * it with the current defaults, and reading a submission into options or what to fix.
 */
import type { AllMiddlewareArgs } from "@slack/bolt";
import { z } from "zod";
import type { TaskOptions } from "../../threads/options.ts";
import type { TaskDefaults } from "../../store/types.ts";
import { DEFAULTS_FIELD, NO_DEFAULT, renderDefaultsModal } from "../../view/defaults.ts";
import type { ListenerDeps } from "./surface.ts";

const Value = z.object({
  value: z.string().nullish(),
  selected_option: z.object({ value: z.string() }).nullish(),
});

/** A defaults modal's submission (its inputs, and the channel in `private_metadata`). */
export const DefaultsSubmission = z.object({
  user: z.object({ id: z.string().min(1) }),
  view: z.object({
    private_metadata: z.string().optional(),
    state: z.object({ values: z.record(z.string(), z.record(z.string(), Value)) }),
  }),
});
export type DefaultsSubmission = z.infer<typeof DefaultsSubmission>;

/** Opens the defaults modal; false when Slack refused it (logged). */
export async function openDefaultsModal(
  client: AllMiddlewareArgs["client"],
  deps: ListenerDeps,
  trigger: string,
  scope: { kind: "user" } | { kind: "channel"; channelId: string },
  current: TaskDefaults,
): Promise<boolean> {
  try {
    const view = renderDefaultsModal({ scope, current, choices: deps.choices });
    await client.views.open({ trigger_id: trigger, view: view as never });
    return true;
  } catch (err) {
    deps.logger.warn({ err }, "could not open the defaults modal");
    return false;
  }
}

/** The defaults a submission sets, or what to fix by block id. */
export function readDefaults(
  values: DefaultsSubmission["view"]["state"]["values"],
): { readonly defaults: TaskOptions } | { readonly errors: Record<string, string> } {
  const picked = (id: string): string | undefined => {
    const v = values[id]?.value;
    const raw = (v?.selected_option?.value ?? v?.value ?? "").trim();
    return raw === "" || raw === NO_DEFAULT ? undefined : raw;
  };
  const errors: Record<string, string> = {};
  for (const id of [DEFAULTS_FIELD.model, DEFAULTS_FIELD.agent]) {
    const name = picked(id);
    if (name !== undefined && (name.length > 150 || /[\s<>`]/.test(name))) {
      errors[id] = "A name of at most 150 characters, without spaces, <, > or backticks.";
    }
  }
  if (Object.keys(errors).length > 0) return { errors };
  const effort = picked(DEFAULTS_FIELD.effort);
  const thinking = picked(DEFAULTS_FIELD.thinking);
  const model = picked(DEFAULTS_FIELD.model);
  const agent = picked(DEFAULTS_FIELD.agent);
  return {
    defaults: {
      ...(model !== undefined ? { model } : {}),
      ...(agent !== undefined ? { agent } : {}),
      ...(effort === "low" || effort === "medium" || effort === "high" ? { effort } : {}),
      ...(thinking === "on" || thinking === "off" ? { thinking: thinking === "on" } : {}),
    },
  };
}
