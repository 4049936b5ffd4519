// ESLint flat config: typescript-eslint's recommended rules, React hooks and
// jsx-a11y for the pages; Prettier owns formatting (`npm run format:check`).
import js from "@eslint/js";
import jsxA11y from "eslint-plugin-jsx-a11y";
import reactHooks from "eslint-plugin-react-hooks";
import globals from "globals";
import tseslint from "typescript-eslint";

export default tseslint.config(
  { ignores: ["build/", "public/build/", "node_modules/", "data/", "db/migrations/", "coverage/", "tests/fixtures/"] },
  js.configs.recommended,
  ...tseslint.configs.recommended,
  {
    languageOptions: { globals: { ...globals.node, ...globals.browser } },
    rules: {
      "@typescript-eslint/no-unused-vars": ["error", { argsIgnorePattern: "^_", varsIgnorePattern: "^_", caughtErrors: "none" }],
      // `cond && act()` and `cond ? a() : b()` as statements are a style we use on purpose.
      "@typescript-eslint/no-unused-expressions": ["error", { allowShortCircuit: true, allowTernary: true }],
    },
  },
  {
    // Data access is async (app/dal.server.ts): a query, a transaction or a function that runs one must be awaited,
    // or its error is lost and its write may land after the response. Checked with the types.
    files: ["**/*.ts", "**/*.tsx"],
    languageOptions: { parserOptions: { projectService: true, tsconfigRootDir: import.meta.dirname } },
    rules: {
      "@typescript-eslint/no-floating-promises": "error",
      "@typescript-eslint/no-misused-promises": ["error", { checksVoidReturn: false }],
    },
  },
  {
    // All database access goes through the data-access layer (app/dal.server.ts): queries built with drizzle or
    // `sql`, run by the layer on either dialect. SQL prepared on a raw connection runs on SQLite only. The only
    // places that prepare statements themselves are the layer's SQLite engines, synchronous on purpose (see the
    // README's "Data access"): the run queue's batched store (one write transaction per event-loop turn) and the
    // import's stage file (attached to the connection, copied in one transaction). db/ is the layer's own floor.
    files: ["app/**/*.ts", "app/**/*.tsx", "scripts/**/*.ts", "scripts/**/*.mjs", "seeds/**/*.ts"],
    ignores: [
      "app/dal.server.ts",
      "app/runs/jobs.server.ts",
      "app/runs/providers/shared-limits.server.ts",
      "app/formats/import.server.ts",
      "app/formats/stage*.server.ts",
      "app/formats/writer.server.ts",
      "app/formats/writer/*.server.ts",
    ],
    rules: {
      "no-restricted-syntax": [
        "error",
        {
          selector: "CallExpression[callee.property.name='prepare']",
          message:
            "Query through the data-access layer (dalOf(db).q, .rows, .arrays, .tx in app/dal.server.ts), not a statement prepared on a raw connection.",
        },
        {
          selector: "MemberExpression[object.property.name='$client'][property.name=/^(transaction|exec|pragma)$/]",
          message: "Transactions and statements go through the data-access layer (d.tx in app/dal.server.ts), not the raw connection.",
        },
      ],
    },
  },
  {
    // Tests read JSON bodies and loader data loosely typed.
    files: ["tests/**/*.ts", "tests/**/*.tsx"],
    rules: { "@typescript-eslint/no-explicit-any": "off" },
  },
  {
    files: ["app/**/*.tsx"],
    plugins: { "react-hooks": reactHooks, "jsx-a11y": jsxA11y },
    rules: {
      // The rules of hooks and their dependencies (the React Compiler's extra rules are not used: no compiler here).
      "react-hooks/rules-of-hooks": "error",
      "react-hooks/exhaustive-deps": "error",
      ...jsxA11y.flatConfigs.recommended.rules,
      // Focus is moved on purpose: to the sign-in email, to the first field in error, to a rename box just opened.
      "jsx-a11y/no-autofocus": "off",
    },
  },
);
