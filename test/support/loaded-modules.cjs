// Preloaded into a component's process (NODE_OPTIONS=--require <this file>) by tests that look at what
// it loaded: at exit it writes every module in require.cache (CommonJS files, also those an import()
// loaded) as a JSON array to $LOADED_MODULES_FILE.
const { writeFileSync } = require('node:fs');

const file = process.env.LOADED_MODULES_FILE;
if (!file) throw new Error('loaded-modules.cjs needs LOADED_MODULES_FILE');
process.on('exit', () => writeFileSync(file, JSON.stringify(Object.keys(require.cache))));
