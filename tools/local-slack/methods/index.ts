// Every Web API method family the double implements. Adding a family: write its module, add it here.
import { agentsMethods } from "./agents.ts";
import { appsMethods } from "./apps.ts";
import { assistantMethods } from "./assistant.ts";
import { authMethods } from "./auth.ts";
import { chatStreamMethods } from "./chat-stream.ts";
import { chatMethods } from "./chat.ts";
import { conversationsMethods } from "./conversations.ts";
import { filesMethods } from "./files.ts";
import { functionsMethods } from "./functions.ts";
import { reactionsMethods } from "./reactions.ts";
import { oauthMethods } from "./oauth.ts";
import type { MethodFamily } from "./registry.ts";
import { userGroupsMethods } from "./usergroups.ts";
import { usersMethods } from "./users.ts";
import { viewsMethods } from "./views.ts";

export const METHOD_FAMILIES: readonly MethodFamily[] = [
  authMethods,
  oauthMethods,
  appsMethods,
  chatMethods,
  chatStreamMethods,
  assistantMethods,
  agentsMethods,
  reactionsMethods,
  usersMethods,
  userGroupsMethods,
  conversationsMethods,
  filesMethods,
  viewsMethods,
  functionsMethods,
];
