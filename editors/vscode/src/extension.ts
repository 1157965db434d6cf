import * as path from 'path';
import * as vscode from 'vscode';
import { LanguageClient, LanguageClientOptions, ServerOptions, State } from 'vscode-languageclient/node';
import {
  CLIENT_ID,
  CLIENT_NAME,
  DOCUMENT_SELECTOR,
  Found,
  INSTALL,
  SERVER_NAME,
  SERVER_SETTINGS_SECTION,
  SET_PATH,
  Search,
  findServer,
  hostPlaces,
  initializationOptions,
  installCommand,
  interpreterScriptDirs,
  isExecutable,
  notFound,
  serverExecutable,
} from './launch';
import {
  PYTHON_EXTENSION_ID,
  PythonExtensionApi,
  RESOLVE_TIMEOUT_MS,
  selectedInterpreter,
  withTimeout,
} from './python';

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

type PythonApi = PythonExtensionApi<vscode.Uri>;

let client: LanguageClient | undefined;
let lastServer: Found | undefined;
let starts = 0;
/** Watches an interpreter's script folder after "Install in the selected interpreter". */
let installWatch: vscode.Disposable | undefined;

/** The Python extension's API, if that extension is installed and activates. */
async function pythonApi(): Promise<PythonApi | undefined> {
  const python = vscode.extensions.getExtension<PythonApi>(PYTHON_EXTENSION_ID);
  if (!python) {
    return undefined;
  }
  try {
    // Its activation is bounded like its answers: a slow Python extension delays no server.
    return python.isActive ? python.exports : await withTimeout(Promise.resolve(python.activate()), RESOLVE_TIMEOUT_MS);
  } catch {
    return undefined; // an unusable Python extension only removes one place to look
  }
}

function workspaceFolder(): vscode.Uri | undefined {
  return vscode.workspace.workspaceFolders?.find((folder) => folder.uri.scheme === 'file')?.uri;
}

/** Where acp-lsp is: the setting, else the first place it is found; and the interpreter asked. */
async function lookup(own: vscode.WorkspaceConfiguration): Promise<{ search: Search; interpreter?: string }> {
  const configured = own.get<string>('path', '');
  const folders = (vscode.workspace.workspaceFolders ?? [])
    .filter((folder) => folder.uri.scheme === 'file')
    .map((folder) => folder.uri.fsPath);
  // The Python extension is asked only when the setting does not decide.
  const interpreter = configured.trim() ? undefined : await selectedInterpreter(await pythonApi(), workspaceFolder());
  return { search: findServer(hostPlaces(configured, folders, interpreter)), interpreter };
}

/** Where to start the server from; when nowhere, the one notification that says what to do. */
async function locate(own: vscode.WorkspaceConfiguration, output: vscode.OutputChannel): Promise<Found | undefined> {
  const { search, interpreter } = await lookup(own);
  if (search.found) {
    return search.found;
  }
  const { message, actions } = notFound(search, interpreter);
  output.appendLine(message);
  void vscode.window.showErrorMessage(message, ...actions).then((choice) => {
    if (choice === INSTALL && interpreter) {
      install(interpreter, output);
    } else {
      openPathSetting(choice);
    }
  });
  return undefined;
}

/** Another interpreter selected in the Python extension: restart if that changes which acp-lsp runs. */
async function interpreterChanged(output: vscode.OutputChannel): Promise<void> {
  const { search } = await lookup(vscode.workspace.getConfiguration(CLIENT_ID));
  if (search.found?.command !== lastServer?.command || client?.state !== State.Running) {
    await restart(output);
  }
}

function openPathSetting(choice: string | undefined): void {
  if (choice === SET_PATH) {
    void vscode.commands.executeCommand('workbench.action.openSettings', `${CLIENT_ID}.path`);
  }
}

/**
 * `python -m pip install acp-lsp` for the selected interpreter, in a terminal
 * the user sees; the server starts once acp-lsp appears beside it.
 */
function install(interpreter: string, output: vscode.OutputChannel): void {
  const command = installCommand(interpreter, process.platform, vscode.env.shell);
  const dirs = interpreterScriptDirs(interpreter, process.platform);
  output.appendLine(
    `Installing with \`${command}\` in a terminal; the server starts once ${SERVER_NAME} is in ${dirs.join(' or ')}.`,
  );
  installWatch?.dispose();
  let installed = false;
  // pip writes the script, then makes it executable: wait for both.
  const appeared = async (uri: vscode.Uri) => {
    if (path.parse(uri.fsPath).name !== SERVER_NAME) {
      return;
    }
    for (let tries = 0; tries < 40 && !installed; tries += 1) {
      if (isExecutable(uri.fsPath)) {
        installed = true;
        installWatch?.dispose();
        installWatch = undefined;
        await restart(output);
        return;
      }
      await new Promise((resolve) => setTimeout(resolve, 250));
    }
  };
  const watchers = dirs.map((dir) =>
    vscode.workspace.createFileSystemWatcher(new vscode.RelativePattern(vscode.Uri.file(dir), `${SERVER_NAME}*`)),
  );
  installWatch = vscode.Disposable.from(
    ...watchers.flatMap((watcher) => [watcher.onDidCreate(appeared), watcher.onDidChange(appeared), watcher]),
  );
  const terminal = vscode.window.createTerminal({ name: `Install ${SERVER_NAME}`, cwd: workspaceFolder() });
  terminal.show();
  terminal.sendText(command);
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
  // Another interpreter selected in the Python extension may hold another acp-lsp.
  const python = await pythonApi();
  const changed = python?.environments?.onDidChangeActiveEnvironmentPath?.(() => void interpreterChanged(output));
  if (changed) {
    context.subscriptions.push(changed);
  }
  context.subscriptions.push({ dispose: () => installWatch?.dispose() });
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
