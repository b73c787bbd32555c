import type { CustomAvatarSummary } from '../api/types.ts'
import { readRequiredConnection, type Connection } from '../inputs/common.ts'
import { ActionName, AvatarsOutput } from '../inputs/constants.ts'
import { formatBytes } from '../common/format.ts'
import type { Operation } from './operation.ts'
import { table, text, type ReportBlock } from '../common/report.ts'

interface AvatarsResult {
  avatars: CustomAvatarSummary[]
  completeCount: number
}

export const avatarsOperation: Operation<Connection, AvatarsResult> = {
  name: ActionName.Avatars,

  read: readRequiredConnection,

  async run(inputs, run, journal) {
    const { custom_avatars: avatars } = await run.client.listCustomAvatars(inputs.gameId)
    const completeCount = avatars.filter((avatar) => avatar.complete).length
    journal.push(`listed ${avatars.length} custom avatars`)
    run.logger.info(`${avatars.length} custom avatars, ${completeCount} complete`)
    return { avatars, completeCount }
  },

  outputs(result) {
    return {
      [AvatarsOutput.CustomAvatars]: result.avatars,
      [AvatarsOutput.Count]: result.avatars.length,
      [AvatarsOutput.CompleteCount]: result.completeCount,
    }
  },

  report(result) {
    const blocks: ReportBlock[] = result.avatars.length
      ? [
          table(
            ['Avatar', 'Upload', 'Size', 'Created', 'Complete', 'URL'],
            result.avatars.map((avatar) => [
              avatar.display_name,
              { code: avatar.upload_id },
              formatBytes(avatar.content_length),
              avatar.create_ts,
              avatar.complete ? 'yes' : 'no (uploading)',
              avatar.url ?? '—',
            ]),
          ),
        ]
      : [text('The game has no custom avatars.')]
    return {
      title: `gamehost avatars: ${result.avatars.length} (${result.completeCount} complete)`,
      blocks,
    }
  },
}
