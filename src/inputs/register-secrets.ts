import { runSecrets } from '../common/secrets.ts'
import { basicAuthSecrets } from './basic-auth.ts'
import type { GetInput } from './common.ts'
import { judgeApiUrl } from './api-url.ts'
import { Input } from './constants.ts'
import { inputRow } from './table.ts'

/**
 * Registers with the run's redactor, before anything runs, every secret among these inputs (credentials
 * in api-url too). Returns them, for a face that masks them elsewhere too (`::add-mask::`).
 */
export function registerSecrets(get: GetInput, names: readonly string[]): string[] {
  const secrets: string[] = []
  for (const name of names) {
    if (!inputRow(name)?.secret) continue
    // As the readers take it, trimmed: the value sent, so the value a service may echo back.
    const value = get(name).trim()
    if (!value) continue
    secrets.push(value)
    if (name === Input.BasicAuth || name === Input.FromBasicAuth) secrets.push(...basicAuthSecrets(value))
  }
  secrets.push(...judgeApiUrl(get(Input.ApiUrl).trim()).credentials)
  for (const secret of secrets) runSecrets.add(secret)
  return secrets
}
