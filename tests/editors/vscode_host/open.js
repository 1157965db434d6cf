// Opens a code-server URL in Debian's headless Chromium (Puppeteer drives it;
// the workbench must run in a browser for code-server to start the extension
// host) and keeps it open until the probe extension has written its result.
// Meanwhile it acts in the page for the probe, as a user would: when
// RESULT_FILE.ask appears (JSON {do, ...}), it does that and answers in
// RESULT_FILE.answer (JSON; `error` and `page` when it could not):
// - type {text, accept}: types the text in the focused editor, reads the
//   suggest widget's rows once they stop changing, then types `accept` and
//   takes the first row left with Enter (without `accept`, it closes the
//   widget); answers {rows, narrowed}, each row {label, detail}.
// - quickfix {keys, choose}: presses the chord `keys` (e.g. Control+Period)
//   in the focused editor unless the probe opened the menu itself, reads the
//   code action widget's rows ({title, disabled}) and clicks the first
//   enabled one whose title starts with `choose`; answers {rows, chosen}.
// - hover: reads the editor's hover widget once its text stops changing;
//   answers {parts: [{kind, text, links}]} (kind: markdown or marker).
// - preview {tick, button}: waits for the Refactor Preview panel (view
//   `refactorPreview`) to show changes and reads its rows ({level, text,
//   checked}); with `tick`, ticks the top row's checkbox (changes that need
//   confirmation come unchecked) and reads them again; then clicks `button`
//   (Apply or Discard); answers {rows, ticked, buttons, clicked}.
// - notify {contains, button}: waits for the notification (a toast, or in
//   the notification center) whose message contains `contains`, reads its
//   message and buttons and clicks `button`; answers {message, buttons,
//   clicked}.
// Usage: node open.js URL RESULT_FILE TIMEOUT_MS
'use strict';
const fs = require('fs');
const puppeteer = require('puppeteer-core');

const SUGGEST_WAIT_MS = 10000;
const STEADY_POLLS = 4; // the same rows this many times, 100 ms apart
const NOTIFY_WAIT_MS = 12000;

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

async function typeAndList(page, { text, accept }) {
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
  return answer;
}

/** `read` in the page until it gives the same non-empty answer STEADY_POLLS times. */
async function steady(page, read, arg, ms = SUGGEST_WAIT_MS) {
  const deadline = Date.now() + ms;
  let last = '';
  let count = 0;
  let value;
  while (Date.now() < deadline && count < STEADY_POLLS) {
    await sleep(100);
    value = await page.evaluate(read, arg);
    const now = JSON.stringify(value);
    count = value && now === last ? count + 1 : 0;
    last = now;
  }
  return count >= STEADY_POLLS ? value : undefined;
}

/** The code action widget's rows (group headers left out), in list order. */
function actionRows() {
  const rows = [...document.querySelectorAll('.action-widget .monaco-list-row.action')];
  if (rows.length === 0) {
    return undefined;
  }
  rows.sort((a, b) => Number(a.dataset.index) - Number(b.dataset.index));
  return rows.map((row) => ({
    index: Number(row.dataset.index),
    title: (row.querySelector('.title') || row).textContent,
    disabled: row.classList.contains('option-disabled'),
  }));
}

/** Presses a chord: the modifiers held, the last key pressed. */
async function chord(page, keys) {
  const modifiers = keys.slice(0, -1);
  for (const key of modifiers) {
    await page.keyboard.down(key);
  }
  await page.keyboard.press(keys[keys.length - 1]);
  for (const key of modifiers.reverse()) {
    await page.keyboard.up(key);
  }
}

async function quickFix(page, { keys, choose }) {
  if (keys) {
    await chord(page, keys);
  }
  const rows = await steady(page, actionRows);
  if (!rows) {
    return { error: 'no code action widget', page: await page.evaluate(pageState) };
  }
  const chosen = rows.find((row) => row.title.startsWith(choose) && !row.disabled);
  if (!chosen) {
    await page.keyboard.press('Escape');
    return { rows, error: `no enabled row starts with ${choose}` };
  }
  // A real click on the row, as a user picks it with the mouse.
  await page.click(`.action-widget .monaco-list-row.action[data-index="${chosen.index}"]`);
  return { rows, chosen: chosen.title };
}

/** The visible hover widget of the editor, one part per row: a provider's Markdown or a problem. */
function hoverParts() {
  const hover = [...document.querySelectorAll('.monaco-editor .monaco-hover')].find(
    (element) => !element.classList.contains('hidden') && element.offsetParent !== null,
  );
  if (!hover) {
    return undefined;
  }
  const parts = [
    ...hover.querySelectorAll('.hover-row .hover-contents, .hover-row.markdown-hover, .marker.hover-contents'),
  ];
  const seen = new Set();
  const found = [];
  for (const part of parts) {
    if ([...seen].some((outer) => outer.contains(part))) {
      continue;
    }
    seen.add(part);
    found.push({
      kind: part.classList.contains('marker') || part.closest('.marker') ? 'marker' : 'markdown',
      text: part.textContent,
      links: [...part.querySelectorAll('a')].map((a) => a.getAttribute('data-href') || a.getAttribute('href')),
    });
  }
  return found.length > 0 ? found : undefined;
}

async function hover(page) {
  const parts = await steady(page, hoverParts);
  await page.keyboard.press('Escape');
  return parts ? { parts } : { error: 'no hover widget', page: await page.evaluate(pageState) };
}

/** The Refactor Preview panel once it holds changes: its rows, by level. */
function previewRows() {
  const panel = document.querySelector('.bulk-edit-panel[data-state="data"]');
  if (!panel || panel.offsetParent === null) {
    return undefined;
  }
  const rows = [...panel.querySelectorAll('.monaco-list-row')];
  if (rows.length === 0) {
    return undefined;
  }
  rows.sort((a, b) => Number(a.dataset.index) - Number(b.dataset.index));
  return rows.map((row) => ({
    level: Number(row.getAttribute('aria-level')),
    text: row.textContent,
    checked: row.querySelector('input.edit-checkbox') ? row.querySelector('input.edit-checkbox').checked : undefined,
  }));
}

function previewButtons() {
  const buttons = [...document.querySelectorAll('.bulk-edit-panel .content .buttons .monaco-button')];
  return buttons.map((button) => button.textContent);
}

async function preview(page, { tick, button }) {
  const rows = await steady(page, previewRows);
  if (!rows) {
    return { error: 'no Refactor Preview with changes', page: await page.evaluate(pageState) };
  }
  const answer = { rows };
  if (tick) {
    // Changes that need confirmation come unchecked: tick the top row (all below it follow).
    await page.click('.bulk-edit-panel .monaco-list-row[data-index="0"] input.edit-checkbox');
    answer.ticked = await steady(page, previewRows);
  }
  answer.buttons = await page.evaluate(previewButtons);
  const index = answer.buttons.indexOf(button);
  if (index < 0) {
    return { ...answer, error: `no ${button} button` };
  }
  const handles = await page.$$('.bulk-edit-panel .content .buttons .monaco-button');
  await handles[index].click();
  return { ...answer, clicked: button };
}

const NOTIFICATIONS = '.notifications-toasts .notification-list-item, .notifications-center .notification-list-item';

/** The notifications now shown, as toasts or in the notification center: message and buttons. */
function toasts(selector) {
  return [...document.querySelectorAll(selector)].map((item) => ({
    message: (item.querySelector('.notification-list-item-message') || item).textContent,
    buttons: [...item.querySelectorAll('.notification-list-item-buttons-container .monaco-button')].map(
      (button) => button.textContent,
    ),
  }));
}

async function notify(page, { contains, button }) {
  const deadline = Date.now() + NOTIFY_WAIT_MS;
  let shown = [];
  while (Date.now() < deadline) {
    shown = await page.evaluate(toasts, NOTIFICATIONS);
    const toast = shown.find((item) => item.message.includes(contains));
    if (toast) {
      const clicked = await page.evaluate(
        (selector, contains, button) => {
          for (const item of document.querySelectorAll(selector)) {
            const message = item.querySelector('.notification-list-item-message');
            if (message && message.textContent.includes(contains)) {
              const buttons = item.querySelectorAll('.notification-list-item-buttons-container .monaco-button');
              const found = [...buttons].find((element) => element.textContent === button);
              if (found) {
                found.click();
                return true;
              }
            }
          }
          return false;
        },
        NOTIFICATIONS,
        contains,
        button,
      );
      return { ...toast, toasts: shown.length, clicked: clicked ? button : undefined };
    }
    await sleep(100);
  }
  return { error: `no notification containing ${contains}`, shown, page: await page.evaluate(pageState) };
}

const ASKED = { type: typeAndList, quickfix: quickFix, hover, preview, notify };

async function answer(page, request, reply) {
  const asked = JSON.parse(fs.readFileSync(request, 'utf8'));
  fs.unlinkSync(request);
  let answered;
  try {
    answered = await ASKED[asked.do](page, asked);
  } catch (error) {
    answered = { error: String((error && error.stack) || error) };
  }
  fs.writeFileSync(`${reply}.part`, JSON.stringify(answered));
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
      if (fs.existsSync(`${resultFile}.ask`)) {
        await answer(page, `${resultFile}.ask`, `${resultFile}.answer`);
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
