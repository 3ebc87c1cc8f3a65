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
    // Command-line entry points talk to the terminal.
    files: ["src/simulator/main.ts", "scripts/**", "bench/**"],
    rules: { "no-console": "off" },
  },
  {
    files: ["**/*.js"],
    languageOptions: { globals: { process: "readonly", URL: "readonly" } },
  },
);
