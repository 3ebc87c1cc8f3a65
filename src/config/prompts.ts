/**
 * TASK_SUGGESTED_PROMPTS: what Slack's agent view offers when a person opens the app
 * (`assistant.threads.setSuggestedPrompts`: at most 4). JSON array; unset: defaults; `[]`: none.
 */
import { z } from "zod";
import { jsonOf, parsedOr } from "./values.ts";

export type SuggestedPrompt = Readonly<z.infer<typeof Prompt>>;

/** Also in manifest.yml's `features.agent_view.suggested_prompts` (the manifest test checks). */
export const DEFAULT_SUGGESTED_PROMPTS: readonly SuggestedPrompt[] = [
  {
    title: "Build a website",
    message: "Build a landing page for a bakery with a menu, opening hours and a contact form",
  },
  {
    title: "Make an app",
    message:
      "Make a small web app to track team expenses, with a form, a table and a monthly total",
  },
  {
    title: "Write a document",
    message: "Write a one-page project brief for a team offsite, ready to share as a document",
  },
  {
    title: "Create an image",
    message: "Create a simple logo for a coffee cart as a PNG image",
  },
];

const Prompt = z.object({
  title: z.string().trim().min(1).max(75),
  message: z.string().trim().min(1).max(2000),
});

export const suggestedPrompts = parsedOr<readonly SuggestedPrompt[]>(
  DEFAULT_SUGGESTED_PROMPTS,
  'must be a JSON array of at most 4 {"title","message"} objects (title up to 75 characters), e.g. [{"title":"Build a website","message":"Build a landing page for a bakery"}]',
  (v) => z.array(Prompt).max(4).safeParse(jsonOf(v)).data,
);
