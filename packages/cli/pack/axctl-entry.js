// Entry of the packed axctl: scripts/pack-axctl.mjs bundles this file with vite into the
// package's dist/axctl.js, the CLI from its sources (see bin/axctl.js for the checkout's).
import { main } from '../src/main.ts';

await main();
