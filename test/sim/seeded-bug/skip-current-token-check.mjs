// Registers the hooks below in the process it is imported into (node --import): the seeded bug of
// `npm run sim:regions`, which the history checker must catch.
import { register } from 'node:module';

register('./skip-current-token-check-hooks.mjs', import.meta.url);
