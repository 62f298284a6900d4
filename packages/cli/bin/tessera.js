#!/usr/bin/env node
// Tessera ships TypeScript sources; tsx compiles them on load (docs/decisions/0001).
import { register } from 'tsx/esm/api';

register();
await import('../src/main.ts');
