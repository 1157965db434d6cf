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
// It writes what it saw to $ACP_PROBE_RESULT as JSON.
'use strict';
const fs = require('fs');
const path = require('path');
const vscode = require('vscode');

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

/** open.js types `typed` (then `accept` and Enter) in the focused editor; its answer: the suggest widget's rows. */
async function typedInPage(typed, accept) {
  const request = `${process.env.ACP_PROBE_RESULT}.type`;
  const reply = `${process.env.ACP_PROBE_RESULT}.typed`;
  fs.rmSync(reply, { force: true });
  fs.writeFileSync(`${request}.part`, JSON.stringify({ text: typed, accept }));
  fs.renameSync(`${request}.part`, request);
  const answer = await until(() => fs.existsSync(reply), TYPED_WAIT_MS);
  if (!answer) {
    return { error: `open.js never answered in ${TYPED_WAIT_MS} ms` };
  }
  return JSON.parse(fs.readFileSync(reply, 'utf8'));
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

const SCENARIOS = { diagnostics, completion };

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
