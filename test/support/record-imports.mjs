// Loaded with `node --import`: records every module the process resolves, one URL a line, in the
// file TESSERA_RECORD_IMPORTS names. Lets a test prove what a process does NOT load.
import { register } from 'node:module';

register('./record-imports-hooks.mjs', import.meta.url, { data: { file: process.env.TESSERA_RECORD_IMPORTS } });
