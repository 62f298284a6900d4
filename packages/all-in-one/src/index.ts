export { composeAllInOne } from './all-in-one-composition.js';
