// The console's build: console/ → public/console/ (served by the Worker under /console/). Preact's
// JSX runtime through Vite's own transform; no plugin needed for a production build.
import { fileURLToPath } from "node:url";
import { defineConfig } from "vite";

const here = (p) => fileURLToPath(new URL(p, import.meta.url));

export default defineConfig({
  root: here("."),
  base: "/console/",
  publicDir: false,
  oxc: { jsx: { runtime: "automatic", importSource: "preact" } },
  build: {
    outDir: here("../public/console"),
    emptyOutDir: true,
    // The page's CSP allows no inline script or style, so nothing is inlined as a data: URL either.
    assetsInlineLimit: 0,
    modulePreload: { polyfill: false },
    sourcemap: false,
    target: "es2022",
  },
});
