#!/usr/bin/env node
// Compiled JavaScript, run by node itself: `npm ci` (the root `prepare`) or `npm run build` makes dist/.
await import('../dist/main.js');
