// The layering of src/, checked by dependency-cruiser in `npm test` (`npm run lint:deps`).
//
// Layers from the top down; a file may import its own layer and any layer below it, never one
// above. The order is the one today's imports already follow (type-only imports included: a
// type import still ties a lower module's meaning to a higher one):
//   entry          main, bootstrap (builds everything), workspaces, service-key, reseal/
//   slack/         Bolt listeners, Slack Web API, OAuth, the Slack call scheduler
//   threads/       what a Slack thread asks for and who may ask
//   preview/       page previews in Chromium: implements runs/' PagePreviews port (it imports
//                  the port's types from runs/ports.ts; runs/ never imports preview/)
//   runs/          the life of one run and its hand-over between instances
//   feature        thread-context/, feedback/
//   view/          Block Kit and mrkdwn (imports types of service/ and store/)
//   data           service/ (the task service client), store/
//   base           config/, log.ts, metrics.ts, util/, tracing/ (OpenTelemetry)
// tools/simulator/ (the task service double, a development tool) is cruised too: it uses only
// the base layer of src/, and nothing in src/ imports it (nor anything else under tools/).

/** One path pattern per layer, top first. */
const layers = [
  {
    name: "entry",
    path: "^src/(main|bootstrap|workspaces|service-key)[.]ts$|^src/reseal/",
  },
  { name: "slack", path: "^src/slack/" },
  { name: "threads", path: "^src/threads/" },
  { name: "preview", path: "^src/preview/" },
  { name: "runs", path: "^src/runs/" },
  { name: "feature", path: "^src/(thread-context|feedback)/" },
  { name: "view", path: "^src/view/" },
  { name: "data", path: "^src/(service|store)/" },
  { name: "base", path: "^src/(log|metrics)[.]ts$|^src/(config|util|tracing)/" },
];

const simulator = "^tools/simulator/";
const base = layers.at(-1).path;
const layered = layers.map((l) => l.path);

/** For each layer, one rule: it imports nothing from the layers above it. */
const upward = layers.slice(1).map((layer, i) => ({
  name: `no-upward-from-${layer.name}`,
  comment: `${layer.name} sits below ${layers
    .slice(0, i + 1)
    .map((l) => l.name)
    .join(", ")}: it must not import them`,
  severity: "error",
  from: { path: layer.path },
  to: { path: layers.slice(0, i + 1).map((l) => l.path) },
}));

export default {
  forbidden: [
    ...upward,
    {
      name: "runs-not-threads",
      comment: "runs/ (the life of one run) never imports threads/ (what a thread asks for)",
      severity: "error",
      from: { path: "^src/runs/" },
      to: { path: "^src/threads/" },
    },
    {
      name: "core-not-app",
      comment: "service/, store/ and view/ never import runs/, threads/ or slack/",
      severity: "error",
      from: { path: "^src/(service|store|view)/" },
      to: { path: "^src/(runs|threads|slack)/" },
    },
    {
      name: "src-not-tests-or-tools",
      comment: "the app never imports test/, tools/ or bench/",
      severity: "error",
      from: { path: "^src/" },
      to: { path: "^(test|tools|bench)/" },
    },
    {
      name: "simulator-apart",
      comment: "tools/simulator/ (the task service double) uses only src/'s base layer",
      severity: "error",
      from: { path: simulator },
      to: { path: "^src/", pathNot: base },
    },
    {
      name: "every-file-in-a-layer",
      comment: "a new folder or top-level file under src/ is given a layer here first",
      severity: "error",
      from: {},
      to: { path: "^src/", pathNot: layered },
    },
    {
      name: "every-importer-in-a-layer",
      comment: "a new folder or top-level file under src/ is given a layer here first",
      severity: "error",
      from: { path: "^src/", pathNot: layered },
      to: {},
    },
    {
      name: "no-circular",
      comment: "no import cycle, type-only imports included",
      severity: "error",
      from: {},
      to: { circular: true },
    },
    {
      name: "not-to-unresolvable",
      comment: "every import names a module that exists (a typo in a path would hide an edge)",
      severity: "error",
      from: {},
      to: { couldNotResolve: true },
    },
  ],
  options: {
    doNotFollow: { path: "node_modules" },
    // Type-only imports are edges too.
    tsPreCompilationDeps: true,
    tsConfig: { fileName: "tsconfig.json" },
    // `.ts` specifiers under ESM (allowImportingTsExtensions) and packages' "exports" maps.
    enhancedResolveOptions: {
      exportsFields: ["exports"],
      conditionNames: ["import", "require", "node", "default", "types"],
      extensions: [".ts", ".js", ".mjs", ".cjs", ".json"],
    },
    skipAnalysisNotInRules: true,
  },
};
