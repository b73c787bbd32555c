// `node --import ./scripts/compile-cache.ts --test`: each test file's process (the runner passes its
// --import on) keeps the TypeScript it strips and the code it compiles in node_modules/.cache, for the
// next file's process and the next run: most test files load the same modules.
import { enableCompileCache } from 'node:module'
import { fileURLToPath } from 'node:url'

enableCompileCache(fileURLToPath(new URL('../node_modules/.cache/node-compile', import.meta.url)))
