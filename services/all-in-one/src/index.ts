export { runAllInOne } from './main.js';
