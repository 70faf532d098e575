#!/usr/bin/env node
// axctl entry point: the compiled CLI lives in dist/ (built by `pnpm build`).
import { main } from '../dist/main.js';

await main();
