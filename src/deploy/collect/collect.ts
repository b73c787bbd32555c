// The deploy's first stage, which calls no service: the files found and opened, how they are served,
// and their digest when needed before anything is created.

import { UsageError } from '../../api/errors.ts'
import { SITE_BYTES_LIMIT } from '../../api/rules.ts'
import { formatBytes, plural } from '../../common/format.ts'
import type { Logger } from '../../common/logger.ts'
import { Input } from '../../inputs/constants.ts'
import type { Site } from '../../inputs/deploy.ts'
import { buildManifest, type ArtifactFile, type Manifest } from './files.ts'
import { hashArtifacts } from './hash.ts'
import { scanSite, type ScanOptions } from './scan.ts'
import nodePath from 'node:path'
import { hiddenLeftOut } from './walk.ts'
import { checkRecordPathFree } from './record.ts'
import {
  applyContentTypes,
  logServingPlan,
  planServing,
  unityBuildFolderParts,
  type ServingPlan,
} from './web-engine.ts'
import { inputAssignment, inputName } from '../../common/input-naming.ts'
import { usage } from '../../inputs/common.ts'

type SiteSource = Pick<Site, 'files' | 'includeHidden' | 'webEngine' | 'headers'> &
  Partial<Pick<Site, 'failOnWarning' | 'requireIndex'>> & { path: string }

export interface CollectOptions extends Pick<ScanOptions, 'open' | 'signal'> {
  logger: Logger
  /** A dry run, or a build to compare with the last one; else files are hashed as they upload. */
  digestFirst: boolean
  /** Else only the content types apply. */
  publish: boolean
  siteRecord?: boolean
}

export interface CollectedSite {
  files: ArtifactFile[]
  serving: ServingPlan
  totalBytes: number
  /** Only when hashed first. */
  manifest: Manifest | undefined
  hidden: string[]
}

export async function collectSite(site: SiteSource, options: CollectOptions): Promise<CollectedSite> {
  const { logger } = options
  const { files, hidden } = await scanSite({
    ...options,
    root: site.path,
    patterns: site.files,
    includeHidden: site.includeHidden,
  })
  const totalBytes = files.reduce((sum, f) => sum + f.size, 0)
  if (totalBytes >= SITE_BYTES_LIMIT)
    throw usage`{path}: the site holds ${formatBytes(totalBytes)}; the service takes less than ${SITE_BYTES_LIMIT} bytes (1 GB) a site`
  if (options.siteRecord) checkRecordPathFree(files)
  logger.info(`${plural(files.length, 'file')}, ${formatBytes(totalBytes)}`)
  const leftOut = hiddenLeftOut(hidden)
  if (leftOut) logger.info(leftOut)
  // A root page first: without one, / answers 404 whatever the engine's plan.
  const noPage = site.requireIndex === false ? undefined : missingIndex(files, site.path)
  if (noPage) throw new UsageError(noPage)
  const serving = await planServing(files, site.webEngine, site.headers)
  applyContentTypes(files, serving)
  logServingPlan(serving, logger)
  if (site.failOnWarning && serving.warnings.length) {
    const count = serving.warnings.length === 1 ? 'a warning' : `${serving.warnings.length} warnings`
    throw usage`{fail-on-warning}: the site drew ${count}, so nothing was created: ${serving.warnings.join(' ')}`
  }
  if (serving.routes.length && !options.publish)
    logger.info(
      `No version is published (${inputName(Input.Publish)} is off, or no namespace): the routes above are not set; the content types are`,
    )
  const hashed = options.digestFirst ? await hashArtifacts(files, options.open) : undefined
  const manifest = hashed && buildManifest(files, hashed)
  if (manifest) logger.info(`Digest ${manifest.digest}`)
  return { files, serving, totalBytes, manifest, hidden }
}

/** With the folder to give instead: a Unity build's parent for its `Build/`, or the folder of the page. */
function missingIndex(files: readonly ArtifactFile[], root: string): string | undefined {
  if (!files.length || files.some((file) => file.path === 'index.html')) return undefined
  const base = `${inputName(Input.Path)} '${root}' has no index.html at its root, so the site's / would answer 404`
  const onPurpose = `; a site that is no page (an asset host) sets ${inputAssignment(Input.RequireIndex, 'false')}`
  const rootNames = files.filter((file) => !file.path.includes('/')).map((file) => file.path)
  const lookalike = rootNames.find((name) => /^index\.html?$/i.test(name))
  if (lookalike)
    return `${base}: it holds ${lookalike}, ${indexLookalike(lookalike)}; rename ${lookalike} to index.html`
  const unity = unityBuildFolderParts(rootNames)
  if (unity.length) {
    return (
      `${base}: it looks like the Build/ folder inside a Unity WebGL build (${unity.slice(0, 3).join(', ')}). ` +
      `The site is its parent folder, which holds index.html and Build/: give ${inputAssignment(Input.Path, nodePath.dirname(root))}`
    )
  }
  const pages = files.filter((file) => file.path.endsWith('/index.html'))
  const shallowest = pages.sort((a, b) => a.path.split('/').length - b.path.split('/').length)[0]
  if (shallowest) {
    const folder = shallowest.path.slice(0, -'/index.html'.length)
    return `${base}: its page is in ${folder}/ (${shallowest.path}); if that is the site, give ${inputAssignment(Input.Path, nodePath.join(root, folder))}${onPurpose}`
  }
  return `${base}: give the folder that holds the game's index.html${onPurpose}`
}

/** How a root file named `index.html` or `index.htm` in any case differs from `index.html`. */
function indexLookalike(name: string): string {
  const caseDiffers = !/^index\.html?$/.test(name)
  const endingDiffers = name.length === 'index.htm'.length
  const how = !caseDiffers ? 'in its ending' : endingDiffers ? 'in case and ending' : 'only in case'
  const caseSensitive = caseDiffers ? ', and file names are case-sensitive' : ''
  return `whose name differs from index.html ${how}: the site's / is served from index.html alone${caseSensitive}`
}
