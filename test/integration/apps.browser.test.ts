// An MCP App in a real browser behind loadout: the ext-apps example server
// `@modelcontextprotocol/server-basic-vanillajs` (from npm) behind `loadout serve`, a small test
// host built on the ext-apps AppBridge (in this process, its MCP client on loadout over stdio),
// and the App's View rendered in headless Chromium (Debian's /usr/bin/chromium; no browser
// download, every network request refused). The View's own call (`get-time`, by its server's own
// name) goes View → postMessage → AppBridge → loadout → server, and its answer shows on screen.
import { existsSync } from 'node:fs';
import path from 'node:path';
import type { JSONRPCMessage, Transport } from '@modelcontextprotocol/client';
import { AppBridge } from '@modelcontextprotocol/ext-apps/app-bridge';
import { chromium, type Browser, type Page } from 'playwright-core';
import { afterEach, describe, expect, it } from 'vitest';
import { ROOT, nodeServer, useGatewaySandbox, writeServersYaml } from '../helpers/gateway.js';

const CHROMIUM = '/usr/bin/chromium';
const BASIC_APP = path.join(ROOT, 'node_modules/@modelcontextprotocol/server-basic-vanillajs/dist/index.js');
const ISO_TIME = /^\d{4}-\d\d-\d\dT\d\d:\d\d:\d\d(\.\d+)?Z$/;

// The host page: the View in an iframe, its messages handed to the bridge (toBridge), and the
// bridge's to it by postMessage, as a host's PostMessageTransport does.
const HOST_PAGE = `<!doctype html><html><body><iframe id="view" sandbox="allow-scripts allow-same-origin" style="width:600px;height:400px"></iframe>
<script>window.addEventListener('message', (event) => {
  if (event.source === document.getElementById('view').contentWindow) window.toBridge(event.data);
});</script></body></html>`;

/** What the test reads of the View's iframe in the page (the tests compile without the DOM's types). */
interface ViewFrame {
  srcdoc: string;
  readonly contentWindow: { postMessage(message: unknown, targetOrigin: string): void };
}

/** The bridge's side of the View's postMessage channel, driven through the page. */
class PageTransport implements Transport {
  onmessage?: (message: JSONRPCMessage) => void;
  onclose?: () => void;
  onerror?: (error: Error) => void;
  constructor(private readonly page: Page) {}
  async start(): Promise<void> {}
  async send(message: JSONRPCMessage): Promise<void> {
    await this.page.locator('#view').evaluate((frame: ViewFrame, sent) => frame.contentWindow.postMessage(sent, '*'), message);
  }
  close(): Promise<void> {
    this.onclose?.();
    return Promise.resolve();
  }
  receive(message: unknown): void {
    this.onmessage?.(message as JSONRPCMessage);
  }
}

describe.skipIf(!existsSync(CHROMIUM))('an MCP App in Chromium through loadout', () => {
  const sandbox = useGatewaySandbox();
  let browser: Browser | undefined;
  afterEach(async () => {
    await browser?.close();
    browser = undefined;
  });

  it("renders the View, and the View's own tool call succeeds and shows on screen", async () => {
    await writeServersYaml(sandbox.dirs.configDir, { basic: nodeServer(BASIC_APP, { args: [BASIC_APP, '--stdio'] }) });
    const { client } = await sandbox.start({
      args: ['--equip', 'all'],
      capabilities: { extensions: { 'io.modelcontextprotocol/ui': { mimeTypes: ['text/html;profile=mcp-app'] } } },
    });
    const { tools } = await client.listTools();
    const uiTool = tools.find((tool) => (tool._meta?.ui as { resourceUri?: string } | undefined)?.resourceUri);
    expect(uiTool?.name).toBe('basic_get-time');
    const viewUri = (uiTool!._meta!.ui as { resourceUri: string }).resourceUri;
    const view = await client.readResource({ uri: viewUri });
    const html = (view.contents[0] as { text: string; mimeType: string }).text;
    expect(view.contents[0]!.mimeType).toBe('text/html;profile=mcp-app');

    browser = await chromium.launch({ executablePath: CHROMIUM, args: ['--no-sandbox'] });
    const page = await browser.newPage();
    await page.route('**/*', (route) => route.abort());
    const transport = new PageTransport(page);
    await page.exposeFunction('toBridge', (message: unknown) => transport.receive(message));
    await page.setContent(HOST_PAGE);
    const bridge = new AppBridge(client, { name: 'loadout-test-host', version: '1.0.0' }, { serverTools: {}, logging: {} });
    const initialized = new Promise<void>((resolve) => (bridge.oninitialized = () => resolve()));
    await bridge.connect(transport);
    await page.locator('#view').evaluate((frame: ViewFrame, text) => void (frame.srcdoc = text), html);
    await initialized;

    const frame = page.frameLocator('#view');
    await frame.locator('#get-time-btn').click();
    await expect.poll(async () => frame.locator('#server-time').textContent(), { timeout: 15_000 }).toMatch(ISO_TIME);
  });
});
