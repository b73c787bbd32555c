// `npm run emulator`: runs the emulator until SIGINT or SIGTERM (the flags are in command.ts).

import { errorMessage } from '../common/format.ts'
import { runEmulatorCommand } from './command.ts'

runEmulatorCommand(process.argv.slice(2), {
  out: (line) => console.log(line),
  err: (line) => console.error(line),
})
  .then((code) => {
    if (code !== undefined) process.exitCode = code
  })
  .catch((error: unknown) => {
    console.error('gamehost emulator:', errorMessage(error))
    process.exitCode = 1
  })
