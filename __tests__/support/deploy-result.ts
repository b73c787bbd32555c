// A deploy's result as the account, the comment and the summary read it: a run that created nothing,
// with what a test gives (`provisioned` merged into its own).
import type { DeployResult } from '../../src/deploy/pipeline.ts'

type Given = Partial<Omit<DeployResult, 'provisioned'>> & {
  provisioned?: Partial<DeployResult['provisioned']>
}

export function deployResult({ provisioned, ...given }: Given = {}): DeployResult {
  return {
    dryRun: false,
    skipped: false,
    siteName: 'space-game main abcdef0',
    siteId: undefined,
    uploadId: undefined,
    manifest: undefined,
    manifestPath: undefined,
    upload: undefined,
    uploadCompleted: false,
    published: undefined,
    plannedParts: 3,
    durationMs: 10,
    ...given,
    provisioned: {
      nameId: undefined,
      namespaceId: undefined,
      namespaceCreated: false,
      domain: undefined,
      matchmakerValidated: false,
      ...provisioned,
    },
  }
}
