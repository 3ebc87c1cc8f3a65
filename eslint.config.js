// Lint: ESLint with typescript-eslint (type-aware rules stay in `tsc --noEmit`).
import js from "@eslint/js";
import tseslint from "typescript-eslint";

export default tseslint.config(
  { ignores: ["node_modules/", "data/", "coverage/"] },
  js.configs.recommended,
  ...tseslint.configs.recommended,
  {
    rules: {
      "@typescript-eslint/no-explicit-any": "error",
      "@typescript-eslint/consistent-type-imports": "error",
      "@typescript-eslint/no-non-null-assertion": "warn",
      "@typescript-eslint/no-unused-vars": [
        "error",
        { argsIgnorePattern: "^_", varsIgnorePattern: "^_", destructuredArrayIgnorePattern: "^_" },
      ],
      eqeqeq: ["error", "always"],
      "no-console": "error",
    },
  },
  {
    // bootstrap builds the objects in dependency order: a closure that names a variable declared
    // further down hides a cycle that the import graph does not show (issue 23). Functions and
    // classes may still be hoisted; type references are not values.
    files: ["src/bootstrap.ts"],
    rules: {
      "no-use-before-define": "off",
      "@typescript-eslint/no-use-before-define": [
        "error",
        {
          functions: false,
          classes: false,
          variables: true,
          enums: true,
          typedefs: false,
          ignoreTypeReferences: true,
        },
      ],
    },
  },
  {
    // Command-line entry points talk to the terminal.
    files: ["tools/simulator/main.ts", "scripts/**", "bench/**"],
    rules: { "no-console": "off" },
  },
  {
    // Redis and Chromium come from the run's global setup (test/support/needs.ts), which starts
    // a throwaway Redis and says what it skipped; reading the variables directly skips silently.
    files: ["test/**/*.ts"],
    ignores: ["test/support/global-setup.ts"],
    rules: {
      "no-restricted-syntax": [
        "error",
        {
          selector:
            "MemberExpression[object.object.name='process'][object.property.name='env'][property.name=/^(TEST_REDIS_URL|CHROMIUM_PATH)$/]",
          message:
            "Use testRedisUrl() / chromiumPath() / storeBackends() from test/support/needs.ts.",
        },
      ],
    },
  },
  {
    files: ["**/*.js"],
    languageOptions: { globals: { process: "readonly", URL: "readonly" } },
  },
);
