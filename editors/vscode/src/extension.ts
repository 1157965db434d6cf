import * as vscode from 'vscode';
import { LanguageClient, LanguageClientOptions, ServerOptions, State } from 'vscode-languageclient/node';
import {
  CLIENT_ID,
  CLIENT_NAME,
  DOCUMENT_SELECTOR,
  Found,
  SERVER_SETTINGS_SECTION,
  findServer,
  hostPlaces,
  initializationOptions,
  notFoundMessage,
  serverExecutable,
} from './launch';

/** What the extension returns from `activate`: read by its end-to-end test. */
export interface Api {
  /** The server started last, and where it was found. */
  server(): Found | undefined;
  /** How many times a server was started (the restart command adds one). */
  starts(): number;
  running(): boolean;
  /** Whether the server offered pull diagnostics to this client (else it pushes). */
  pulls(): boolean;
}

const SET_PATH = 'Set path…';

let client: LanguageClient | undefined;
let lastServer: Found | undefined;
let starts = 0;

/** The Python extension's interpreter for the first folder, if that extension is installed. */
async function pythonInterpreter(): Promise<string | undefined> {
  const python = vscode.extensions.getExtension('ms-python.python');
  if (!python) {
    return undefined;
  }
  try {
    const api = await python.activate();
    const folder = vscode.workspace.workspaceFolders?.[0]?.uri;
    const active = api?.environments?.getActiveEnvironmentPath?.(folder);
    if (typeof active?.path === 'string') {
      return active.path;
    }
    const command = api?.settings?.getExecutionDetails?.(folder)?.execCommand;
    return Array.isArray(command) && typeof command[0] === 'string' ? command[0] : undefined;
  } catch {
    return undefined; // an unusable Python extension only removes one place to look
  }
}

/** Where to start the server from: the setting, else the first place it is found. */
async function locate(own: vscode.WorkspaceConfiguration, output: vscode.OutputChannel): Promise<Found | undefined> {
  const configured = own.get<string>('path', '').trim();
  if (configured) {
    return { command: configured, source: `the ${CLIENT_ID}.path setting` };
  }
  const folders = (vscode.workspace.workspaceFolders ?? [])
    .filter((folder) => folder.uri.scheme === 'file')
    .map((folder) => folder.uri.fsPath);
  const search = findServer(hostPlaces(folders, await pythonInterpreter()));
  if (search.found) {
    return search.found;
  }
  const message = notFoundMessage(search);
  output.appendLine(message);
  void vscode.window.showErrorMessage(message, SET_PATH).then(openPathSetting);
  return undefined;
}

function openPathSetting(choice: string | undefined): void {
  if (choice === SET_PATH) {
    void vscode.commands.executeCommand('workbench.action.openSettings', `${CLIENT_ID}.path`);
  }
}

function createClient(found: Found, own: vscode.WorkspaceConfiguration, output: vscode.OutputChannel): LanguageClient {
  const executable = serverExecutable({ path: found.command, args: own.get<string[]>('args', []) });
  const serverOptions: ServerOptions = { run: executable, debug: executable };
  const clientOptions: LanguageClientOptions = {
    documentSelector: DOCUMENT_SELECTOR,
    outputChannel: output,
    initializationOptions: initializationOptions(vscode.workspace.getConfiguration(SERVER_SETTINGS_SECTION)),
    // Sends workspace/didChangeConfiguration when any `acp.*` setting changes.
    synchronize: { configurationSection: SERVER_SETTINGS_SECTION },
  };
  return new LanguageClient(CLIENT_ID, CLIENT_NAME, serverOptions, clientOptions);
}

async function restart(output: vscode.OutputChannel): Promise<void> {
  if (client) {
    const old = client;
    client = undefined;
    await old.stop().catch(() => undefined); // one that never started has nothing to stop
  }
  // Looked up again each time: a changed `acpLsp.path` or a new .venv is picked up.
  const own = vscode.workspace.getConfiguration(CLIENT_ID);
  const found = await locate(own, output);
  if (!found) {
    return;
  }
  output.appendLine(`Starting ${found.command} (found in ${found.source}).`);
  lastServer = found;
  starts += 1;
  client = createClient(found, own, output);
  try {
    await client.start();
  } catch (error) {
    // Graceful failure: say what is wrong once, keep the editor working.
    const message =
      `ACP language server could not start from ${found.command} (found in ${found.source}): ${String(error)}. ` +
      `Set ${CLIENT_ID}.path to a working acp-lsp executable.`;
    output.appendLine(message);
    void vscode.window.showErrorMessage(message, SET_PATH).then(openPathSetting);
  }
}

export async function activate(context: vscode.ExtensionContext): Promise<Api> {
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
  await restart(output);
  return {
    server: () => lastServer,
    starts: () => starts,
    running: () => client?.state === State.Running,
    pulls: () => client?.initializeResult?.capabilities.diagnosticProvider !== undefined,
  };
}

export async function deactivate(): Promise<void> {
  await client?.stop();
  client = undefined;
}
