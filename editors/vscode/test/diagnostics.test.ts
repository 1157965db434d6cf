// Runs the extension's launch code against the real acp-lsp over stdio with
// vscode-languageclient's own protocol layer, announcing the capabilities VS
// Code sends, and checks the diagnostics VS Code would show on examples/demo.
//
// tests/editors/test_vscode.py sets up the environment: acp-lsp on PATH,
// ACP_DEMO_DIR (a temp copy of examples/demo registered with the backend),
// ACP_DATA_DIR (fresh) and ACP_VSCODE_CAPABILITIES (pytest-lsp's recording of
// VS Code's capabilities).
import { spawn } from 'node:child_process';
import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { pathToFileURL } from 'node:url';
import { test } from 'node:test';
import * as assert from 'node:assert/strict';
import {
  createProtocolConnection,
  Diagnostic,
  DiagnosticSeverity,
  DocumentDiagnosticReport,
  StreamMessageReader,
  StreamMessageWriter,
} from 'vscode-languageserver-protocol/node';
import { initializationOptions, serverExecutable, SERVER_SETTINGS_SECTION } from '../src/launch';

const TIMEOUT_MS = 20_000;

function requiredEnv(name: string): string {
  const value = process.env[name];
  assert.ok(value, `${name} must be set (run this through tests/editors/test_vscode.py)`);
  return value;
}

/** What VS Code answers for `acp` when the user changed nothing: the contributed defaults. */
function contributedServerDefaults(): Record<string, unknown> {
  const manifest = JSON.parse(readFileSync(join(__dirname, '..', '..', 'package.json'), 'utf8'));
  const defaults: Record<string, unknown> = {};
  const prefix = `${SERVER_SETTINGS_SECTION}.`;
  for (const [key, schema] of Object.entries(manifest.contributes.configuration.properties)) {
    if (key.startsWith(prefix)) {
      defaults[key.slice(prefix.length)] = (schema as { default: unknown }).default;
    }
  }
  return defaults;
}

/** The recorded VS Code capabilities plus what vscode-languageclient 9 adds for pull
 * diagnostics (DiagnosticFeature.fillClientCapabilities). */
function vscodeCapabilities(): any {
  const recorded = JSON.parse(readFileSync(requiredEnv('ACP_VSCODE_CAPABILITIES'), 'utf8'));
  const capabilities = recorded.capabilities;
  capabilities.textDocument.diagnostic = { dynamicRegistration: true, relatedDocumentSupport: false };
  capabilities.workspace.diagnostics = { refreshSupport: true };
  return { clientInfo: recorded.clientInfo, capabilities };
}

test('VS Code client protocol: diagnostics on examples/demo', { timeout: TIMEOUT_MS + 5_000 }, async () => {
  const demo = requiredEnv('ACP_DEMO_DIR');
  // The extension's defaults: `acp-lsp` from PATH, no extra arguments.
  const executable = serverExecutable({ path: '', args: [] });
  const server = spawn(executable.command, executable.args, { stdio: ['pipe', 'pipe', 'inherit'] });
  const connection = createProtocolConnection(
    new StreamMessageReader(server.stdout),
    new StreamMessageWriter(server.stdin),
  );
  const settings = contributedServerDefaults();
  const messages: string[] = [];
  let refreshes = 0;
  connection.onRequest('workspace/configuration', (params: { items: { section?: string }[] }) =>
    params.items.map((item) => (item.section === SERVER_SETTINGS_SECTION ? settings : null)),
  );
  connection.onRequest('client/registerCapability', () => null);
  connection.onRequest('window/workDoneProgress/create', () => null);
  const progressKinds: string[] = [];
  connection.onNotification('$/progress', (params: { value: { kind: string } }) => {
    progressKinds.push(params.value.kind);
  });
  connection.onRequest('workspace/diagnostic/refresh', () => {
    refreshes += 1;
    return null;
  });
  connection.onNotification('window/showMessage', (params: { message: string }) => {
    messages.push(params.message);
  });
  connection.listen();

  try {
    const rootUri = pathToFileURL(demo).href;
    const { clientInfo, capabilities } = vscodeCapabilities();
    const init: any = await connection.sendRequest('initialize', {
      processId: process.pid,
      clientInfo,
      rootUri,
      workspaceFolders: [{ uri: rootUri, name: 'demo' }],
      capabilities,
      initializationOptions: initializationOptions(settings),
    });
    assert.ok(init.capabilities.diagnosticProvider, 'server must offer pull diagnostics to VS Code');
    await connection.sendNotification('initialized', {});

    const path = join(demo, 'greetings.py');
    const text = readFileSync(path, 'utf8');
    const uri = pathToFileURL(path).href;
    await connection.sendNotification('textDocument/didOpen', {
      textDocument: { uri, languageId: 'python', version: 1, text },
    });
    // At once, as a user may: a save before the backend connects still runs.
    await connection.sendNotification('textDocument/didSave', { textDocument: { uri } });

    // VS Code pulls on open and again on every workspace/diagnostic/refresh.
    let items: Diagnostic[] = [];
    const deadline = Date.now() + TIMEOUT_MS;
    while (Date.now() < deadline) {
      const report: DocumentDiagnosticReport = await connection.sendRequest('textDocument/diagnostic', {
        textDocument: { uri },
      });
      if (report.kind === 'full') {
        items = report.items;
      }
      if (items.some((d) => d.severity === DiagnosticSeverity.Error)
        && items.some((d) => d.severity === DiagnosticSeverity.Warning)) {
        break;
      }
      await new Promise((resolve) => setTimeout(resolve, 100));
    }

    // JavaScript string indices are UTF-16 code units: exactly LSP's default encoding.
    const lines = text.split('\n');
    const typoLine = lines.findIndex((line) => line.includes('nmae'));
    const todoLine = lines.findIndex((line) => line.includes('# TODO'));
    const typo = items.find((d) => d.message.includes('nmae'));
    assert.ok(typo, `no diagnostic for the undefined name; got ${JSON.stringify(items)}`);
    assert.equal(typo.severity, DiagnosticSeverity.Error);
    assert.deepEqual(typo.range.start, { line: typoLine, character: lines[typoLine].indexOf('nmae') });
    const todo = items.find((d) => d.message.includes('pick the farewell'));
    assert.ok(todo, `no diagnostic for the TODO marker; got ${JSON.stringify(items)}`);
    assert.equal(todo.severity, DiagnosticSeverity.Warning);
    assert.deepEqual(todo.range.start, { line: todoLine, character: lines[todoLine].indexOf('#') });
    assert.ok(refreshes > 0, 'the server never asked VS Code to re-pull after the run');
    // The run shows as work-done progress from begin to end (which follows its results).
    const progressDeadline = Date.now() + 5_000;
    while (progressKinds.at(-1) !== 'end' && Date.now() < progressDeadline) {
      await new Promise((resolve) => setTimeout(resolve, 50));
    }
    assert.equal(progressKinds[0], 'begin', `progress: ${progressKinds}`);
    assert.equal(progressKinds.at(-1), 'end', `progress: ${progressKinds}`);
    const complaints = messages.filter((m) => /invalid setting/i.test(m));
    assert.deepEqual(complaints, [], 'the contributed default settings must be accepted');

    await connection.sendRequest('shutdown');
    await connection.sendNotification('exit');
  } finally {
    connection.dispose();
    server.kill();
  }
});
