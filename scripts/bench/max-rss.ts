// Preloaded (--import) into a measured process where there is no /proc to sample (macOS, Windows):
// at exit it writes its own peak resident set (process.resourceUsage().maxRSS, KiB) to the file
// named by GAMEHOST_BENCH_MAXRSS.
import { writeFileSync } from 'node:fs'

const file = process.env.GAMEHOST_BENCH_MAXRSS
if (file) process.on('exit', () => writeFileSync(file, String(process.resourceUsage().maxRSS)))
