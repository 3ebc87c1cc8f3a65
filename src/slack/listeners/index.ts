/**
 * Every Slack surface the app listens on, in one list. A new surface (mentions, DMs and
 * assistant threads, App Home, modals, shortcuts, Workflow Builder steps) is one new file here
 * and one line below.
 */
import * as actions from "./actions.ts";
import * as agentView from "./agent-view.ts";
import * as command from "./command.ts";
import * as home from "./home.ts";
import * as message from "./message.ts";
import * as modal from "./modal.ts";
import * as settings from "./settings.ts";
import * as taskViews from "./task-views.ts";
import * as uninstall from "./uninstall.ts";
import * as workflowStep from "./workflow-step.ts";
import * as workspaceSettings from "./workspace-settings.ts";
import type { Surface } from "./surface.ts";

export const SURFACES: readonly Surface[] = [
  uninstall,
  command,
  message,
  actions,
  modal,
  home,
  agentView,
  settings,
  taskViews,
  workspaceSettings,
  workflowStep,
];

export type { ListenerDeps, Surface, WorkspaceKeys } from "./surface.ts";
