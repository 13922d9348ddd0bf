import { defineConfig } from 'vite';
import { svelte } from '@sveltejs/vite-plugin-svelte';
import { fileURLToPath } from 'node:url';

// The web UI lives in ui/; npm commands run from the repository root. The Tauri shell loads the
// production build from ui/dist (frontendDist "../ui/dist") and the dev server from port 1420.
const uiRoot = fileURLToPath(new URL('./ui', import.meta.url));

export default defineConfig({
  root: uiRoot,
  base: './',
  plugins: [svelte()],
  clearScreen: false,
  server: {
    port: 1420,
    strictPort: true,
    host: 'localhost',
  },
  preview: {
    port: 1420,
    strictPort: true,
  },
  envPrefix: ['VITE_', 'TAURI_ENV_'],
  build: {
    outDir: 'dist',
    emptyOutDir: true,
    // The oldest webviews Tauri v2 supports (WebKitGTK 2.40 / Safari 16, WebView2 on Chromium).
    target: ['es2022', 'chrome105', 'safari16'],
    sourcemap: false,
    chunkSizeWarningLimit: 1500,
  },
});
