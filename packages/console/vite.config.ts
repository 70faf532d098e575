// Vite builds the console into dist/, which admin-api serves at `/` (services/admin-api/src/console.ts).
import react from '@vitejs/plugin-react';
import { defineConfig } from 'vite';
import { precompress } from './precompress';

export default defineConfig({
  // precompress: .br and .gz beside each file, sent by Accept-Encoding (admin-api console.ts).
  plugins: [react(), precompress()],
  // Served from the root of admin-api; client routes fall back to index.html there.
  base: '/',
  build: {
    outDir: 'dist',
    emptyOutDir: true,
    // A console for operators, not a landing page: one entry chunk is fine, warn only past 1 MB.
    chunkSizeWarningLimit: 1024,
  },
  server: {
    // `vite` in packages/console during development: the API of a local stack (pnpm start).
    proxy: { '/api': 'http://127.0.0.1:8080' },
  },
});
