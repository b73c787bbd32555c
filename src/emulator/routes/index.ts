// The service's API routes.

import type { ApiRoute } from '../core.ts'
import { listGameCustomAvatars } from './avatars.ts'
import { getBootstrap } from './bootstrap.ts'
import {
  removeNamespaceCdnAuthUser,
  setNamespaceCdnAuthType,
  updateNamespaceCdnAuthUser,
} from './cdn-auth.ts'
import { createGameCdnSite } from './cdn-sites.ts'
import { validateGroup } from './groups.ts'
import { getNamespaceLobby } from './lobbies.ts'
import { validateMatchmakerConfig } from './matchmaker-config.ts'
import { getGameById } from './games.ts'
import {
  addNamespaceDomain,
  createGameNamespace,
  getGameNamespaceById,
  removeNamespaceDomain,
} from './namespaces.ts'
import { getGameNamespaceVersionHistoryList, updateGameNamespaceVersion } from './namespace-versions.ts'
import { listServers } from './servers.ts'
import { completeUpload } from './uploads.ts'
import { createGameVersion, getGameVersionById, reserveVersionName, validateGameVersion } from './versions.ts'

/** 'METHOD /pattern' of every API route, the keys a fault script accepts (checkScriptRoutes). */
export function routeKeys(): string[] {
  return API_ROUTES.map((route) => `${route.method} ${route.pattern}`)
}

export const API_ROUTES: readonly ApiRoute[] = [
  listServers,
  getNamespaceLobby,
  validateMatchmakerConfig,
  listGameCustomAvatars,
  createGameNamespace,
  validateGroup,
  addNamespaceDomain,
  createGameCdnSite,
  completeUpload,
  getGameById,
  getGameNamespaceById,
  removeNamespaceDomain,
  updateNamespaceCdnAuthUser,
  removeNamespaceCdnAuthUser,
  setNamespaceCdnAuthType,
  createGameVersion,
  getGameVersionById,
  validateGameVersion,
  reserveVersionName,
  updateGameNamespaceVersion,
  getGameNamespaceVersionHistoryList,
  getBootstrap,
]
