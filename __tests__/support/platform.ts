// What a platform lacks, as the reason a test that needs it is skipped there (false where it has it):
// `test(name, { skip: needsFifo }, ...)` says on a Windows runner what it skipped and why.

const windows = process.platform === 'win32'

/** mkfifo: FIFOs in the file system. */
export const needsFifo: string | false = windows && 'Windows has no FIFOs in its file system (no mkfifo)'

/** Creating symbolic links. */
export const needsSymlinks: string | false =
  windows && 'creating a symbolic link on Windows needs Developer Mode or an administrator'

/** File names holding a newline, a tab or other characters Windows forbids. */
export const needsAnyFileName: string | false =
  windows && 'Windows forbids control characters and some punctuation in file names'

/** Mode bits that bind: chmod 000 makes a file unreadable (root's own case is each test's to handle). */
export const needsModeBits: string | false =
  windows && 'Windows ignores chmod: mode 000 leaves a file readable'
