import type { Browser } from 'puppeteer-core'
import { BROWSER_CALL_TIMEOUT_MS } from '../../common/timeouts.ts'
import { browserEnv } from './env.ts'
import { launchSandboxed, type Sandbox } from './sandbox.ts'

interface LaunchOptions {
  browserPath: string
  timeoutMs: number
  proxy: string
}

/**
 * What a browser on a runner needs: no GPU, nothing fetched of its own; the sandbox unless refused;
 * every connection through the proxy, loopback's too, and no name resolved by the browser itself.
 */
export function launchArgs(options: { sandbox: boolean; proxy?: string }): string[] {
  const proxied = options.proxy
    ? [
        `--proxy-server=${options.proxy}`,
        '--proxy-bypass-list=<-loopback>',
        '--host-resolver-rules=MAP * ~NOTFOUND , EXCLUDE 127.0.0.1',
        // WebRTC only through the proxy, which carries no UDP: no peer reached past it.
        '--force-webrtc-ip-handling-policy=disable_non_proxied_udp',
      ]
    : []
  return [
    ...(options.sandbox ? [] : ['--no-sandbox']),
    ...proxied,
    '--disable-gpu',
    '--enable-unsafe-swiftshader',
    '--disable-quic',
    '--no-first-run',
    '--disable-background-networking',
    '--disable-component-update',
    '--disable-sync',
    '--window-size=1280,720',
  ]
}

export async function launchBrowser(options: LaunchOptions): Promise<{ browser: Browser; sandbox: Sandbox }> {
  const { default: puppeteer } = await import('puppeteer-core')
  return launchSandboxed((sandbox) =>
    puppeteer.launch({
      executablePath: options.browserPath,
      headless: true,
      pipe: true,
      args: launchArgs({ sandbox, proxy: options.proxy }),
      env: browserEnv(process.env, process.platform),
      defaultViewport: { width: 1280, height: 720 },
      // The run's own cancellation closes it: puppeteer must not take SIGINT from the action.
      handleSIGINT: false,
      handleSIGTERM: false,
      handleSIGHUP: false,
      timeout: options.timeoutMs,
      // Every call to the browser bounded: one that stops answering fails the check in seconds, not minutes.
      protocolTimeout: BROWSER_CALL_TIMEOUT_MS,
    }),
  )
}
