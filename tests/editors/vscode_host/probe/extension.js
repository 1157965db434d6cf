// Test-only extension, run inside a real VS Code (code-server) next to the
// acp-lsp extension. $ACP_PROBE_SCENARIO says what it does:
// - "diagnostics" (the default): what a new user does (open greetings.py,
//   save it), then the restart command, and what VS Code's diagnostics API
//   held at each step. It runs in Restricted Mode too, to report that acp-lsp
//   does not.
// - "completion": VS Code's completion list after `  # noqa: ` at the end of
//   $ACP_PROBE_LINE of greetings.py and after `preset = "` in a new
//   [[validations]] table of acp.toml, twice each: through the API
//   (vscode.executeCompletionItemProvider, after a workspace edit) and as the
//   suggest widget shows it while open.js types the same text in the page,
//   then narrows the list and takes a row with Enter.
// - "actions": after a save of greetings.py, in inventory.py: workspace
//   symbols for `ruff` (vscode.executeWorkspaceSymbolProvider); the hover on
//   the unused import, through vscode.executeHoverProvider and in the hover
//   widget (editor.action.showHover, read by open.js); its code actions
//   (vscode.executeCodeActionProvider, edits resolved), then "Fix with ruff"
//   clicked in the quick-fix widget (Ctrl+. by open.js), the text, and the
//   editor's undo; then "Apply plan “$ACP_PROBE_PLAN_TITLE”" clicked in the
//   refactor menu on the line holding $ACP_PROBE_PLAN_LINE_TEXT, its changes
//   ticked and Apply pressed in the Refactor Preview (open.js), the text,
//   VS Code's saves, the backend's plan states ($ACP_PROBE_BACKEND plan
//   list) until applied, and the server's message.
// - "install": acp-lsp is nowhere; open.js reads the notification and
//   clicks "Install in the selected interpreter"; then whether the server
//   runs, where it was found, the terminals, and greetings.py's diagnostics
//   after a save.
// It writes what it saw to $ACP_PROBE_RESULT as JSON.
'use strict';
const childProcess = require('child_process');
const util = require('util');
const fs = require('fs');
const path = require('path');
const vscode = require('vscode');

const execFile = util.promisify(childProcess.execFile);

const WAIT_MS = 40000;
const TYPED_WAIT_MS = 20000;

function sleep(ms) {
  return new Promise((resolve) => setTimeout(resolve, ms));
}

async function until(condition, ms = WAIT_MS) {
  const deadline = Date.now() + ms;
  while (Date.now() < deadline) {
    const value = await condition();
    if (value) {
      return value;
    }
    await sleep(50);
  }
  return undefined;
}

function shown(uri) {
  return vscode.languages.getDiagnostics(uri).map((d) => ({
    line: d.range.start.line,
    character: d.range.start.character,
    severity: d.severity, // 0 Error, 1 Warning, 2 Information, 3 Hint
    message: d.message,
  }));
}

function errorAndWarning(uri) {
  const severities = new Set(shown(uri).map((d) => d.severity));
  return severities.has(vscode.DiagnosticSeverity.Error) && severities.has(vscode.DiagnosticSeverity.Warning);
}

/** acp-lsp's API once it runs, or undefined when VS Code keeps it off. */
async function started(result) {
  result.trusted = vscode.workspace.isTrusted;
  // VS Code hides an extension it keeps off (Restricted Mode) from the host.
  const extension = vscode.extensions.getExtension('acp-lsp.acp-lsp');
  result.installed = extension !== undefined;
  if (!extension || !result.trusted) {
    return undefined;
  }
  // Activated by the folder's acp.toml, without anyone asking.
  result.activated_by_itself = (await until(() => extension.isActive, 15000)) === true;
  const api = extension.isActive ? extension.exports : await extension.activate();
  result.server = api.server();
  return api;
}

/** greetings.py opened and saved, as the README says: its validations run. */
async function openAndSave(uri) {
  const document = await vscode.workspace.openTextDocument(uri);
  await vscode.window.showTextDocument(document);
  // VS Code writes only a changed document.
  const edit = new vscode.WorkspaceEdit();
  edit.insert(uri, document.lineAt(document.lineCount - 1).range.end, '\n');
  await vscode.workspace.applyEdit(edit);
  const saved = await document.save();
  await until(() => errorAndWarning(uri));
  return { document, saved };
}

async function diagnostics(result) {
  const api = await started(result);
  if (!api) {
    return;
  }
  const uri = vscode.Uri.file(process.env.ACP_PROBE_FILE);
  result.saved = (await openAndSave(uri)).saved;
  result.before_restart = shown(uri);

  await vscode.commands.executeCommand('acpLsp.restart');
  result.starts = api.starts();
  result.running_after_restart = api.running();
  result.pulls = api.pulls();
  await until(() => errorAndWarning(uri));
  result.after_restart = shown(uri);
}

function text(value) {
  return typeof value === 'string' || value === undefined ? value : value.value;
}

/** A completion item as the API returned it (VS Code's types, UTF-16 columns). */
function item(completion) {
  const label = completion.label;
  const range = completion.range && 'replacing' in completion.range ? completion.range.replacing : completion.range;
  return {
    label: typeof label === 'string' ? label : label.label,
    description: typeof label === 'string' ? undefined : label.description,
    kind: vscode.CompletionItemKind[completion.kind],
    detail: completion.detail,
    documentation: text(completion.documentation),
    sortText: completion.sortText,
    insertText: text(completion.insertText),
    range: range && { line: range.start.line, start: range.start.character, end: range.end.character },
  };
}

/** open.js acts in the page (see its header: type, quickfix, hover, preview, notify); its answer. */
async function ask(request, ms = TYPED_WAIT_MS) {
  const asked = `${process.env.ACP_PROBE_RESULT}.ask`;
  const reply = `${process.env.ACP_PROBE_RESULT}.answer`;
  fs.rmSync(reply, { force: true });
  fs.writeFileSync(`${asked}.part`, JSON.stringify(request));
  fs.renameSync(`${asked}.part`, asked);
  const answered = await until(() => fs.existsSync(reply), ms);
  if (!answered) {
    return { error: `open.js never answered ${request.do} in ${ms} ms` };
  }
  const answer = JSON.parse(fs.readFileSync(reply, 'utf8'));
  fs.rmSync(reply, { force: true });
  return answer;
}

/** open.js types `typed` (then `accept` and Enter) in the focused editor; its answer: the suggest widget's rows. */
function typedInPage(typed, accept) {
  return ask({ do: 'type', text: typed, accept });
}

/**
 * VS Code's completion at the end of `typed`, inserted at `at`: through the
 * API after a workspace edit (undone after), then in the UI, typed by open.js
 * with the cursor at `at`, where `accept` narrows the list and Enter takes
 * the first row (`accepted`: what the line should then end with).
 */
async function completedAfter(document, at, typed, { trigger, accept, accepted }) {
  const uri = document.uri;
  const edit = new vscode.WorkspaceEdit();
  edit.insert(uri, at, typed);
  const applied = await vscode.workspace.applyEdit(edit);
  const position = document.positionAt(document.offsetAt(at) + typed.length);
  const list = await vscode.commands.executeCommand('vscode.executeCompletionItemProvider', uri, position, trigger);
  const api = {
    applied,
    line: document.lineAt(position.line).text,
    position: { line: position.line, character: position.character },
    items: (list ? list.items : []).map(item),
  };
  const undo = new vscode.WorkspaceEdit();
  undo.delete(uri, new vscode.Range(at, position));
  await vscode.workspace.applyEdit(undo);

  await vscode.window.showTextDocument(document, { selection: new vscode.Range(at, at), preserveFocus: false });
  const ui = await typedInPage(typed, accept);
  await until(() => document.lineAt(at.line).text.endsWith(typed + accepted), 5000);
  ui.line = document.lineAt(at.line).text;
  return { api, ui };
}

async function completion(result) {
  if (!(await started(result))) {
    return;
  }
  const uri = vscode.Uri.file(process.env.ACP_PROBE_FILE);
  const { document, saved } = await openAndSave(uri);
  result.saved = saved;
  const line = Number(process.env.ACP_PROBE_LINE);
  const end = document.lineAt(line).range.end;
  result.noqa = await completedAfter(document, end, '  # noqa: ', { trigger: ' ', accept: 'F8', accepted: 'F821' });

  const toml = await vscode.workspace.openTextDocument(path.join(path.dirname(uri.fsPath), 'acp.toml'));
  await vscode.window.showTextDocument(toml);
  const table = new vscode.WorkspaceEdit();
  table.insert(toml.uri, toml.lineAt(toml.lineCount - 1).range.end, '\n[[validations]]\n');
  await vscode.workspace.applyEdit(table);
  const last = toml.lineAt(toml.lineCount - 1).range.end;
  result.preset = await completedAfter(toml, last, 'preset = "', { trigger: '"', accept: 'ru', accepted: 'ruff' });
}

// --- actions: a quick fix, hover, workspace symbols, a plan through the refactor preview

function diagnostic(d) {
  return {
    line: d.range.start.line,
    character: d.range.start.character,
    end: { line: d.range.end.line, character: d.range.end.character },
    severity: d.severity,
    message: d.message,
    code: d.code !== null && typeof d.code === 'object' ? d.code.value : d.code,
  };
}

function listedAction(action) {
  return {
    title: action.title,
    kind: action.kind ? action.kind.value : undefined,
    preferred: action.isPreferred === true,
    disabled: action.disabled ? action.disabled.reason : undefined,
    command: action.command ? action.command.command : undefined,
    edit: action.edit ? editOf(action.edit) : undefined,
  };
}

/** A WorkspaceEdit's text edits, per file (VS Code's types, UTF-16 columns). */
function editOf(edit) {
  return edit.entries().map(([uri, edits]) => ({
    path: uri.fsPath,
    edits: edits.map((e) => ({
      start: { line: e.range.start.line, character: e.range.start.character },
      end: { line: e.range.end.line, character: e.range.end.character },
      newText: e.newText,
    })),
  }));
}

/** Workspace symbols for `query`, as VS Code's API lists them. */
async function symbols(query) {
  const found = (await vscode.commands.executeCommand('vscode.executeWorkspaceSymbolProvider', query)) || [];
  return found.map((symbol) => ({
    name: symbol.name,
    kind: vscode.SymbolKind[symbol.kind],
    container: symbol.containerName,
    path: symbol.location.uri.fsPath,
    line: symbol.location.range.start.line,
  }));
}

/** The hover at `position`: through the API, then the editor's hover widget (editor.action.showHover). */
async function hovered(document, position) {
  const hovers = (await vscode.commands.executeCommand('vscode.executeHoverProvider', document.uri, position)) || [];
  const api = hovers.map((hover) => hover.contents.map((part) => (typeof part === 'string' ? part : part.value)));
  const selection = new vscode.Range(position, position);
  await vscode.window.showTextDocument(document, { selection, preserveFocus: false });
  await vscode.commands.executeCommand('editor.action.showHover');
  const ui = await ask({ do: 'hover' });
  return { api, ui };
}

/**
 * The quick fix on `finding`: listed through the API (edits resolved), then
 * picked in the code action widget (Ctrl+. in the page), then undone with
 * the editor's undo.
 */
async function quickFixed(document, finding, choose) {
  const before = document.getText();
  const listed = await vscode.commands.executeCommand(
    'vscode.executeCodeActionProvider',
    document.uri,
    finding.range,
    undefined,
    50, // resolve the edits of the first 50: what picking one would apply
  );
  const api = (listed || []).map(listedAction);
  await vscode.window.showTextDocument(document, {
    selection: new vscode.Range(finding.range.start, finding.range.start),
    preserveFocus: false,
  });
  const ui = await ask({ do: 'quickfix', keys: ['Control', 'Period'], choose });
  await until(() => document.getText() !== before, 10000);
  const fixed = { text: document.getText(), dirty: document.isDirty };
  // The user's undo, on the editor that has focus.
  await vscode.window.showTextDocument(document, { preserveFocus: false });
  await vscode.commands.executeCommand('undo');
  await until(() => document.getText() === before, 5000);
  const undone = { text: document.getText(), dirty: document.isDirty };
  return { before, api, ui, fixed, undone };
}

/** The backend's plans, as its CLI lists them (`acp-backend plan list`): what every client sees. */
async function backendPlans() {
  const { stdout } = await execFile(process.env.ACP_PROBE_BACKEND, ['plan', 'list', '--json'], { timeout: 10000 });
  return JSON.parse(stdout).plans;
}

/**
 * The plan on the line that holds `needle`: "Apply plan …" picked in the
 * editor's refactor menu (editor.action.refactor), its changes ticked and
 * Apply pressed in the Refactor Preview that opens; the saves VS Code made,
 * the backend's record of the plan until it is applied, and the message
 * the server showed.
 */
async function planApplied(document, needle, title) {
  const before = document.getText();
  const line = before.split('\n').findIndex((text) => text.includes(needle));
  const range = document.lineAt(line).range;
  const listed = await vscode.commands.executeCommand(
    'vscode.executeCodeActionProvider',
    document.uri,
    range,
    'refactor',
  );
  const api = (listed || []).map(listedAction);
  const choose = `Apply plan “${title}”`;
  await vscode.window.showTextDocument(document, {
    selection: new vscode.Range(range.start.translate(0, 4), range.start.translate(0, 4)),
    preserveFocus: false,
  });
  const menu = vscode.commands.executeCommand('editor.action.refactor');
  const ui = await ask({ do: 'quickfix', choose });
  await menu;
  // VS Code saves the files of a refactoring it applied (files.refactoring.autoSave).
  const saves = [];
  const saving = vscode.workspace.onDidSaveTextDocument((saved) => saves.push(saved.uri.fsPath));
  const preview = ui.error ? { error: 'no menu' } : await ask({ do: 'preview', tick: true, button: 'Apply' }, 30000);
  await until(() => document.getText() !== before, 10000);
  const applied = { text: document.getText(), line };
  const states = [];
  const settled = await until(async () => {
    const now = (await backendPlans()).find((plan) => plan.title === title);
    if (states[states.length - 1] !== (now && now.state)) {
      states.push(now && now.state);
    }
    return now && now.state === 'applied' && !document.isDirty;
  }, 15000);
  saving.dispose();
  const message = await ask({ do: 'notify', contains: title });
  return {
    before,
    api,
    ui,
    preview,
    applied,
    settled: settled === true,
    dirty: document.isDirty,
    saves,
    states,
    message,
    on_disk: fs.readFileSync(document.uri.fsPath, 'utf8'),
  };
}

async function actions(result) {
  if (!(await started(result))) {
    return;
  }
  // The README's first step: ruff checks the whole project at each save.
  const greetings = vscode.Uri.file(process.env.ACP_PROBE_FILE);
  result.saved = (await openAndSave(greetings)).saved;
  const uri = vscode.Uri.file(path.join(path.dirname(greetings.fsPath), 'inventory.py'));
  const document = await vscode.workspace.openTextDocument(uri);
  await vscode.window.showTextDocument(document);
  const unused = await until(() =>
    vscode.languages.getDiagnostics(uri).find((d) => d.message.includes('imported but unused')),
  );
  result.diagnostics = vscode.languages.getDiagnostics(uri).map(diagnostic);
  if (!unused) {
    result.error = 'no "imported but unused" diagnostic in inventory.py';
    return;
  }
  result.symbols = await symbols('ruff');
  result.hover = await hovered(document, unused.range.start);
  result.quickfix = await quickFixed(document, unused, 'Fix with ruff');
  result.plan = await planApplied(document, process.env.ACP_PROBE_PLAN_LINE_TEXT, process.env.ACP_PROBE_PLAN_TITLE);
}

// --- install: no acp-lsp anywhere; the notification's Install button

async function install(result) {
  const api = await started(result);
  if (!api) {
    return;
  }
  result.starts_before = api.starts();
  const notification = {
    do: 'notify',
    contains: 'acp-lsp was not found',
    button: 'Install in the selected interpreter',
  };
  result.notification = await ask(notification, 15000);
  if (result.notification.error) {
    // Not (or no longer) a toast: where a user finds it then, the notification center (the bell).
    result.toast_missed = result.notification;
    await vscode.commands.executeCommand('notifications.showList');
    result.notification = await ask(notification, 15000);
    if (result.notification.error) {
      return;
    }
  }
  result.running = (await until(() => api.running(), 30000)) === true;
  result.server = api.server();
  result.starts = api.starts();
  result.terminals = vscode.window.terminals.map((terminal) => terminal.name);
  const uri = vscode.Uri.file(process.env.ACP_PROBE_FILE);
  result.saved = (await openAndSave(uri)).saved;
  result.diagnostics = shown(uri);
}

const SCENARIOS = { diagnostics, completion, actions, install };

exports.activate = async function activate() {
  const out = process.env.ACP_PROBE_RESULT;
  if (!out) {
    return;
  }
  const result = {};
  try {
    await SCENARIOS[process.env.ACP_PROBE_SCENARIO || 'diagnostics'](result);
  } catch (error) {
    result.error = String((error && error.stack) || error);
  }
  fs.writeFileSync(out, JSON.stringify(result));
};
