// Opens a code-server URL in Debian's headless Chromium (Puppeteer drives it;
// the workbench must run in a browser for code-server to start the extension
// host) and keeps it open until the probe extension has written its result.
// Meanwhile it types for the probe: when RESULT_FILE.type appears (JSON
// {text, accept}), it types the text in the focused editor as a user would,
// reads the suggest widget's rows once they stop changing, then types
// `accept` and takes the first row left with Enter (without `accept`, it
// closes the widget), and answers in RESULT_FILE.typed (JSON {rows,
// narrowed}, each row {label, detail}).
// Usage: node open.js URL RESULT_FILE TIMEOUT_MS
'use strict';
const fs = require('fs');
const puppeteer = require('puppeteer-core');

const SUGGEST_WAIT_MS = 10000;
const STEADY_POLLS = 4; // the same rows this many times, 100 ms apart

function sleep(ms) {
  return new Promise((resolve) => setTimeout(resolve, ms));
}

/** The suggest widget's rows, in list order (the list renders the visible ones only). */
function suggestRows() {
  const rows = [...document.querySelectorAll('.suggest-widget.visible .monaco-list-row')];
  rows.sort((a, b) => Number(a.dataset.index) - Number(b.dataset.index));
  const text = (row, selector) => {
    const found = row.querySelector(selector);
    return found ? found.textContent : undefined;
  };
  return rows.map((row) => ({
    label: text(row, '.label-name'),
    detail: text(row, '.details-label'),
  }));
}

/** What the page shows instead, when no widget came: for the failure message. */
function pageState() {
  const widget = document.querySelector('.suggest-widget');
  const active = document.activeElement;
  return {
    widget: widget ? widget.className : null,
    message: widget ? widget.textContent.slice(0, 200) : null,
    focused: active ? `${active.tagName}.${active.className}` : null,
  };
}

/** The suggest widget's rows once they stop changing (the list is asked again at each trigger character). */
async function steadyRows(page) {
  const deadline = Date.now() + SUGGEST_WAIT_MS;
  let last = '';
  let steady = 0;
  let rows = [];
  while (Date.now() < deadline && steady < STEADY_POLLS) {
    await sleep(100);
    rows = await page.evaluate(suggestRows);
    const now = JSON.stringify(rows);
    steady = rows.length > 0 && now === last ? steady + 1 : 0;
    last = now;
  }
  return steady >= STEADY_POLLS ? rows : undefined;
}

async function typeAndList(page, request, reply) {
  const { text, accept } = JSON.parse(fs.readFileSync(request, 'utf8'));
  fs.unlinkSync(request);
  await page.keyboard.type(text, { delay: 25 });
  const answer = { rows: await steadyRows(page) };
  if (answer.rows && accept) {
    // Narrow the list as a user would, and take the first row with Enter.
    await page.keyboard.type(accept, { delay: 25 });
    answer.narrowed = await steadyRows(page);
    await page.keyboard.press(answer.narrowed ? 'Enter' : 'Escape');
  } else {
    await page.keyboard.press('Escape');
  }
  if (!answer.rows || (accept && !answer.narrowed)) {
    answer.error = 'no steady suggest widget';
    answer.page = await page.evaluate(pageState);
  }
  fs.writeFileSync(`${reply}.part`, JSON.stringify(answer));
  fs.renameSync(`${reply}.part`, reply);
}

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
      if (fs.existsSync(`${resultFile}.type`)) {
        await typeAndList(page, `${resultFile}.type`, `${resultFile}.typed`);
      }
      await sleep(100);
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
