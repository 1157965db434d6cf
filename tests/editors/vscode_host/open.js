// Opens a code-server URL in Debian's headless Chromium (Puppeteer drives it;
// the workbench must run in a browser for code-server to start the extension
// host) and keeps it open until the probe extension has written its result.
// Usage: node open.js URL RESULT_FILE TIMEOUT_MS
'use strict';
const fs = require('fs');
const puppeteer = require('puppeteer-core');

async function main() {
  const [url, resultFile, timeoutMs] = process.argv.slice(2);
  const browser = await puppeteer.launch({
    executablePath: process.env.ACP_CHROMIUM || '/usr/bin/chromium',
    headless: true,
    // --no-sandbox: CI runs as root, where Chromium's sandbox cannot start.
    args: ['--no-sandbox', '--disable-gpu', '--disable-dev-shm-usage', '--no-first-run'],
  });
  try {
    const page = await browser.newPage();
    page.on('pageerror', (error) => process.stderr.write(`page error: ${error.message}\n`));
    await page.goto(url, { waitUntil: 'domcontentloaded' });
    const deadline = Date.now() + Number(timeoutMs);
    while (!fs.existsSync(resultFile) && Date.now() < deadline) {
      await new Promise((resolve) => setTimeout(resolve, 100));
    }
    if (!fs.existsSync(resultFile)) {
      process.stderr.write(`no result after ${timeoutMs} ms; page title: ${await page.title()}\n`);
      process.exitCode = 1;
    }
  } finally {
    await browser.close();
  }
}

main().catch((error) => {
  process.stderr.write(`${error.stack || error}\n`);
  process.exit(1);
});
