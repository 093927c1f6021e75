// google-adk's dev UI served by `adkhost serve --dev-ui` holds a
// conversation in headless Chromium. It starts nothing: run.sh (make
// test-devui) starts the server with the demo app registered.
//
// Environment: DEVUI_URL (server base URL), DEVUI_APP (app name),
// DEVUI_MESSAGE, DEVUI_REPLY (text that must appear), CHROMIUM (browser
// binary, default /usr/bin/chromium: Playwright's own browser download is
// not used), DEVUI_ARTIFACTS (directory for the failure screenshot, page
// text and request log), DEVUI_TIMEOUT_MS.
import { chromium } from 'playwright-core';
import { mkdirSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { tmpdir } from 'node:os';

const base = (process.env.DEVUI_URL || '').replace(/\/$/, '');
if (!base) {
  console.error('DEVUI_URL is required');
  process.exit(2);
}
const app = process.env.DEVUI_APP || 'weather_assistant';
const message = process.env.DEVUI_MESSAGE || "What's the weather in Paris?";
const reply = process.env.DEVUI_REPLY || 'It is sunny in Paris';
const timeout = Number(process.env.DEVUI_TIMEOUT_MS || 30000);
const artifacts = process.env.DEVUI_ARTIFACTS || join(tmpdir(), `devui-e2e-${process.pid}`);

// What google-adk itself answers 404 to while the UI loads (the bundle asks
// for a stylesheet it does not ship); every other failed call is a bug.
const expected404 = new Set(['/dev-ui/prism-dark.css']);

const log = [];
const failures = [];
const started = Date.now();
const step = (s) => console.log(`devui: ${((Date.now() - started) / 1000).toFixed(1)}s ${s}`);

const browser = await chromium.launch({
  executablePath: process.env.CHROMIUM || '/usr/bin/chromium',
  // --no-sandbox: CI runs as root in a container, where Chromium's sandbox
  // cannot start.
  args: ['--no-sandbox', '--disable-dev-shm-usage'],
});
const page = await browser.newPage({ viewport: { width: 1280, height: 800 } });
page.setDefaultTimeout(timeout);
page.on('request', (r) => log.push(`> ${r.method()} ${r.url()} ${r.postData() || ''}`));
page.on('response', (r) => {
  log.push(`< ${r.status()} ${r.url()}`);
  const u = new URL(r.url());
  if (u.origin === base && r.status() >= 400 && !(r.status() === 404 && expected404.has(u.pathname))) {
    failures.push(`${r.request().method()} ${u.pathname}${u.search}: ${r.status()}`);
  }
});
page.on('pageerror', (e) => log.push(`! pageerror ${e.message}`));
page.on('console', (m) => log.push(`console.${m.type()} ${m.text()}`));

let ok = false;
try {
  // The root redirects to /dev-ui/, as under `adk web`.
  step('open ' + base + '/');
  await page.goto(base + '/', { waitUntil: 'domcontentloaded' });
  if (!page.url().startsWith(base + '/dev-ui/')) throw new Error(`/ did not redirect to /dev-ui/: at ${page.url()}`);

  // The toolbar's app button opens the "Select an App" panel, which lists
  // /list-apps; search for the app and pick it.
  step('select app ' + app);
  await page.locator('button.selector-button').first().click();
  await page.getByText('Select an App', { exact: true }).waitFor();
  await page.getByPlaceholder('Search apps...').fill(app);
  await page.getByText(app, { exact: true }).and(page.locator(':not(mat-toolbar *)')).first().click();
  await page.waitForURL((u) => u.searchParams.get('app') === app);
  await page.locator('mat-toolbar').getByText(app, { exact: true }).waitFor();

  // Send the message as a user does; the UI creates the session, then
  // posts /run_sse.
  step('send ' + JSON.stringify(message));
  const box = page.getByPlaceholder('Type a message...');
  await box.fill(message);
  const sessionCreated = page.waitForResponse((r) => r.request().method() === 'POST' && new URL(r.url()).pathname === `/apps/${app}/users/user/sessions`);
  const ran = page.waitForResponse((r) => new URL(r.url()).pathname === '/run_sse');
  await box.press('Enter');
  const sess = await sessionCreated;
  if (sess.status() !== 200) throw new Error(`creating the session: ${sess.status()}`);
  const run = await ran;
  if (run.status() !== 200) throw new Error(`/run_sse: ${run.status()}`);

  step('wait for ' + JSON.stringify(reply));
  await page.getByText(reply).first().waitFor();
  // The question stays on screen too, and the URL names the session.
  await page.getByText(message).first().waitFor();
  const session = new URL(page.url()).searchParams.get('session');
  if (!session) throw new Error(`no session in the URL ${page.url()}`);
  // Calls the UI makes after the reply (its trace panel) must succeed too.
  await page.waitForLoadState('networkidle').catch(() => {});
  if (failures.length) throw new Error('failed requests:\n  ' + failures.join('\n  '));
  ok = true;
  step(`ok: the reply is on screen (session ${session})`);
} catch (e) {
  mkdirSync(artifacts, { recursive: true });
  const shot = join(artifacts, 'failure.png');
  await page.screenshot({ path: shot, fullPage: true }).catch(() => {});
  const text = await page.evaluate(() => document.body.innerText).catch(() => '');
  writeFileSync(join(artifacts, 'page.txt'), text);
  writeFileSync(join(artifacts, 'requests.log'), log.join('\n') + '\n');
  console.error(`devui: FAILED: ${e.message}`);
  console.error(`devui: screenshot ${shot}; page text and request log beside it`);
  if (failures.length) console.error('devui: failed requests:\n  ' + failures.join('\n  '));
} finally {
  await browser.close();
}
process.exit(ok ? 0 : 1);
