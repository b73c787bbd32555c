// The page runs a build's own code (a fork's, on a pull request's preview), and a renderer can read its
// environment: the run's (the inputs, the token, GitHub's variables) is never handed on, only what
// Chrome needs to start and to draw text.

import { runSecrets, type Secrets } from '../../common/secrets.ts'

/** Windows's names are matched whatever their case, as Windows does. */
const KEPT = new Set([
  'PATH',
  'HOME',
  'USER',
  'LOGNAME',
  'SHELL',
  'DISPLAY',
  'WAYLAND_DISPLAY',
  'XAUTHORITY',
  'LANG',
  'LANGUAGE',
  'TZ',
  'TMPDIR',
  'TMP',
  'TEMP',
  'FONTCONFIG_FILE',
  'FONTCONFIG_PATH',
  'CHROME_DEVEL_SANDBOX',
])
const KEPT_PREFIXES = ['LC_', 'XDG_']

/** The system's folders, the user's profile, the processor. */
const KEPT_WINDOWS = new Set(
  [
    'SystemRoot',
    'SystemDrive',
    'windir',
    'ComSpec',
    'PATHEXT',
    'LOCALAPPDATA',
    'APPDATA',
    'USERPROFILE',
    'USERNAME',
    'USERDOMAIN',
    'HOMEDRIVE',
    'HOMEPATH',
    'ProgramData',
    'ProgramFiles',
    'ProgramFiles(x86)',
    'ProgramW6432',
    'CommonProgramFiles',
    'CommonProgramFiles(x86)',
    'CommonProgramW6432',
    'PUBLIC',
    'ALLUSERSPROFILE',
    'COMPUTERNAME',
    'NUMBER_OF_PROCESSORS',
    'PROCESSOR_ARCHITECTURE',
    'OS',
  ].map((name) => name.toUpperCase()),
)

/** Those Chrome needs, and of those none whose value holds a secret of the run (a token in a path). */
export function browserEnv(
  env: NodeJS.ProcessEnv,
  platform: NodeJS.Platform,
  secrets: Pick<Secrets, 'redact'> = runSecrets,
): Record<string, string> {
  const kept: Record<string, string> = {}
  for (const [name, value] of Object.entries(env)) {
    if (value !== undefined && needed(name, platform) && secrets.redact(value) === value) kept[name] = value
  }
  return kept
}

function needed(name: string, platform: NodeJS.Platform): boolean {
  // Case matters outside Windows: `path` is not PATH there.
  const upper = platform === 'win32' ? name.toUpperCase() : name
  if (KEPT.has(upper) || KEPT_PREFIXES.some((prefix) => upper.startsWith(prefix))) return true
  return platform === 'win32' && KEPT_WINDOWS.has(upper)
}
