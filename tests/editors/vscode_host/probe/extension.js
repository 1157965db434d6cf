// Test-only extension, run inside a real VS Code (code-server) next to the
// acp-lsp extension: it does what a new user does (open greetings.py, save
// it), then runs the restart command, and writes what VS Code's diagnostics
// API held at each step to $ACP_PROBE_RESULT as JSON. It runs in Restricted
// Mode too, to report that acp-lsp does not.
'use strict';
const fs = require('fs');
const vscode = require('vscode');

const WAIT_MS = 40000;

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

async function probe(result) {
  const uri = vscode.Uri.file(process.env.ACP_PROBE_FILE);
  result.trusted = vscode.workspace.isTrusted;
  // VS Code hides an extension it keeps off (Restricted Mode) from the host.
  const extension = vscode.extensions.getExtension('acp-lsp.acp-lsp');
  result.installed = extension !== undefined;
  if (!extension || !result.trusted) {
    return;
  }
  // Activated by the folder's acp.toml, without anyone asking.
  result.activated_by_itself = (await until(() => extension.isActive, 15000)) === true;
  const api = extension.isActive ? extension.exports : await extension.activate();
  result.server = api.server();

  const document = await vscode.workspace.openTextDocument(uri);
  await vscode.window.showTextDocument(document);
  // Save it, as the README says; VS Code writes only a changed document.
  const edit = new vscode.WorkspaceEdit();
  edit.insert(uri, document.lineAt(document.lineCount - 1).range.end, '\n');
  await vscode.workspace.applyEdit(edit);
  result.saved = await document.save();
  await until(() => errorAndWarning(uri));
  result.before_restart = shown(uri);

  await vscode.commands.executeCommand('acpLsp.restart');
  result.starts = api.starts();
  result.running_after_restart = api.running();
  result.pulls = api.pulls();
  await until(() => errorAndWarning(uri));
  result.after_restart = shown(uri);
}

exports.activate = async function activate() {
  const out = process.env.ACP_PROBE_RESULT;
  if (!out) {
    return;
  }
  const result = {};
  try {
    await probe(result);
  } catch (error) {
    result.error = String((error && error.stack) || error);
  }
  fs.writeFileSync(out, JSON.stringify(result));
};
