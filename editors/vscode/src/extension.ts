import * as vscode from 'vscode';
import { LanguageClient, LanguageClientOptions, ServerOptions } from 'vscode-languageclient/node';
import {
  CLIENT_ID,
  CLIENT_NAME,
  DOCUMENT_SELECTOR,
  SERVER_SETTINGS_SECTION,
  initializationOptions,
  serverExecutable,
} from './launch';

let client: LanguageClient | undefined;

function createClient(output: vscode.OutputChannel): LanguageClient {
  const own = vscode.workspace.getConfiguration(CLIENT_ID);
  const executable = serverExecutable({
    path: own.get<string>('path', ''),
    args: own.get<string[]>('args', []),
  });
  const serverOptions: ServerOptions = { run: executable, debug: executable };
  const clientOptions: LanguageClientOptions = {
    documentSelector: DOCUMENT_SELECTOR,
    outputChannel: output,
    initializationOptions: initializationOptions(
      vscode.workspace.getConfiguration(SERVER_SETTINGS_SECTION),
    ),
    // Sends workspace/didChangeConfiguration when any `acp.*` setting changes.
    synchronize: { configurationSection: SERVER_SETTINGS_SECTION },
  };
  return new LanguageClient(CLIENT_ID, CLIENT_NAME, serverOptions, clientOptions);
}

async function restart(output: vscode.OutputChannel): Promise<void> {
  if (client) {
    await client.stop();
  }
  // A new client picks up a changed `acpLsp.path` or `acpLsp.args`.
  client = createClient(output);
  await client.start();
}

export async function activate(context: vscode.ExtensionContext): Promise<void> {
  const output = vscode.window.createOutputChannel(CLIENT_NAME);
  context.subscriptions.push(
    output,
    vscode.commands.registerCommand('acpLsp.restart', () => restart(output)),
    vscode.workspace.onDidChangeConfiguration((event) => {
      if (event.affectsConfiguration(`${CLIENT_ID}.path`) || event.affectsConfiguration(`${CLIENT_ID}.args`)) {
        void restart(output);
      }
    }),
  );
  try {
    await restart(output);
  } catch (error) {
    // Graceful failure: say what is wrong once, keep the editor working.
    const message = `ACP language server could not start: ${String(error)}. Check the acpLsp.path setting.`;
    output.appendLine(message);
    void vscode.window.showErrorMessage(message);
  }
}

export async function deactivate(): Promise<void> {
  await client?.stop();
  client = undefined;
}
