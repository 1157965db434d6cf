// How the extension finds, starts and configures acp-lsp. Kept free of the
// `vscode` module so the Node test harness runs this exact code.
import * as fs from 'fs';
import * as os from 'os';
import * as path from 'path';

/** The extension's own settings live under `acpLsp.*`; `acp.*` belongs to the server. */
export const CLIENT_ID = 'acpLsp';
export const CLIENT_NAME = 'ACP Language Server';
export const SERVER_SETTINGS_SECTION = 'acp';
export const SERVER_NAME = 'acp-lsp';

/** Validations cover any file inside a registered resource, whatever its language. */
export const DOCUMENT_SELECTOR = [{ scheme: 'file' }];

export interface LaunchSettings {
  path: string;
  args: readonly string[];
}

export interface Executable {
  command: string;
  args: string[];
}

/** Where a server was found, for the output channel and the error message. */
export interface Found {
  command: string;
  source: string;
}

/** The places users install acp-lsp, in the order they are tried. */
export interface SearchPlaces {
  /** The `acpLsp.path` setting: when set, the only place. */
  configured?: string;
  /** The Python extension's selected interpreter (its executable), when that extension is there. */
  pythonInterpreter?: string;
  workspaceFolders: readonly string[];
  env: NodeJS.ProcessEnv;
  platform: NodeJS.Platform;
  home: string;
}

export interface Search {
  found?: Found;
  /** Every place looked at, in order: what the error message lists. */
  tried: string[];
}

interface Candidate {
  command: string;
  /** Where it was found, for the output channel. */
  source: string;
  /** The place it belongs to, for the list of places tried. */
  place: string;
}

export const CONFIGURED_SOURCE = `the ${CLIENT_ID}.path setting`;
export const INTERPRETER_SOURCE = "the Python extension's selected interpreter";

/** Whether `file` is a file this process may run. */
export function isExecutable(file: string): boolean {
  try {
    fs.accessSync(file, fs.constants.X_OK);
    return fs.statSync(file).isFile();
  } catch {
    return false;
  }
}

function pathsOf(platform: NodeJS.Platform): typeof path.posix {
  return platform === 'win32' ? path.win32 : path.posix;
}

function executableName(platform: NodeJS.Platform): string {
  return platform === 'win32' ? `${SERVER_NAME}.exe` : SERVER_NAME;
}

/**
 * Where `python -m pip install acp-lsp` puts the `acp-lsp` script of an
 * interpreter: beside it (a venv's bin/ or Scripts\, conda on POSIX), or in
 * its Scripts\ folder (a Windows base or conda install, python.exe at the top).
 * A bare command (`python`, no directory) is no place: it says nothing about
 * where acp-lsp would be.
 */
export function interpreterScriptDirs(interpreter: string, platform: NodeJS.Platform): string[] {
  const paths = pathsOf(platform);
  if (!paths.isAbsolute(interpreter)) {
    return [];
  }
  const dir = paths.dirname(interpreter);
  return platform === 'win32' && paths.basename(dir).toLowerCase() !== 'scripts'
    ? [dir, paths.join(dir, 'Scripts')]
    : [dir];
}

function* candidates(places: SearchPlaces): Generator<Candidate> {
  const windows = places.platform === 'win32';
  const paths = pathsOf(places.platform);
  const exe = executableName(places.platform);
  const binDir = windows ? 'Scripts' : 'bin';
  // What a Python extension takes: the interpreter the user selected for
  // this workspace (the Python extension picks a workspace .venv by itself).
  if (places.pythonInterpreter) {
    for (const dir of interpreterScriptDirs(places.pythonInterpreter, places.platform)) {
      const command = paths.join(dir, exe);
      yield { command, source: INTERPRETER_SOURCE, place: command };
    }
  }
  for (const folder of places.workspaceFolders) {
    // The folder's own venv, else the nearest one above it (a repository's
    // .venv when the folder is one project inside it).
    const place = `the .venv or venv of ${folder} or a folder above it`;
    for (let dir = folder; ; dir = paths.dirname(dir)) {
      for (const venv of ['.venv', 'venv']) {
        const command = paths.join(dir, venv, binDir, exe);
        yield { command, source: paths.join(dir, venv), place };
      }
      if (paths.dirname(dir) === dir) {
        break;
      }
    }
  }
  const pipxCommand = paths.join(places.env.PIPX_BIN_DIR || paths.join(places.home, '.local', 'bin'), exe);
  yield { command: pipxCommand, source: "pipx's bin directory", place: pipxCommand };
  const pathDirs = (places.env.PATH ?? places.env.Path ?? '').split(windows ? ';' : ':').filter((dir) => dir !== '');
  for (const dir of pathDirs) {
    yield { command: paths.join(dir, exe), source: 'PATH', place: 'PATH' };
  }
}

/**
 * The acp-lsp to start: the `acpLsp.path` setting when set (as it is, even
 * when it does not exist: starting it says what is wrong), else the first
 * found of the Python extension's selected interpreter, the workspace's
 * venvs, pipx's bin directory and PATH. The extension host's PATH comes from
 * the login shell, not the terminal a user installed acp-lsp from, so PATH
 * is the last place looked at, not the only one.
 */
export function findServer(places: SearchPlaces, executable: (file: string) => boolean = isExecutable): Search {
  const configured = places.configured?.trim();
  if (configured) {
    return { found: { command: configured, source: CONFIGURED_SOURCE }, tried: [CONFIGURED_SOURCE] };
  }
  const tried: string[] = [];
  for (const candidate of candidates(places)) {
    if (!tried.includes(candidate.place)) {
      tried.push(candidate.place);
    }
    if (executable(candidate.command)) {
      return { found: { command: candidate.command, source: candidate.source }, tried };
    }
  }
  return { tried };
}

/** The defaults for `findServer` on this machine. */
export function hostPlaces(
  configured: string,
  workspaceFolders: readonly string[],
  pythonInterpreter?: string,
): SearchPlaces {
  return {
    configured,
    workspaceFolders,
    pythonInterpreter,
    env: process.env,
    platform: process.platform,
    home: os.homedir(),
  };
}

export function serverExecutable(settings: LaunchSettings): Executable {
  const command = settings.path.trim() || SERVER_NAME;
  return { command, args: [...settings.args] };
}

/** The buttons of the notification that says no server was found. */
export const INSTALL = 'Install in the selected interpreter';
export const SET_PATH = `Set ${CLIENT_ID}.path`;

export interface NotFound {
  message: string;
  /** Its buttons: Install only when there is an interpreter to install into. */
  actions: string[];
}

/** The one notification a user sees when no server can be found: where it looked, what to do. */
export function notFound(
  search: Search,
  pythonInterpreter: string | undefined,
  platform: NodeJS.Platform = process.platform,
): NotFound {
  const looked = `${SERVER_NAME} was not found (looked in: ${search.tried.join(', ')}).`;
  // Only an interpreter given as a path can be told to install it.
  if (pythonInterpreter !== undefined && interpreterScriptDirs(pythonInterpreter, platform).length > 0) {
    return {
      message:
        `${looked} Install it in the Python extension's selected interpreter (${pythonInterpreter}) ` +
        `with pip, or set ${CLIENT_ID}.path to the ${SERVER_NAME} executable.`,
      actions: [INSTALL, SET_PATH],
    };
  }
  return {
    message:
      `${looked} Install acp-lsp into this folder's .venv or with pipx, or set ${CLIENT_ID}.path ` +
      `to the ${SERVER_NAME} executable.`,
    actions: [SET_PATH],
  };
}

/**
 * The line typed in a terminal to install acp-lsp with INTERPRETER's pip
 * (`shell`: the terminal's shell, `vscode.env.shell`, for how to quote).
 */
export function installCommand(interpreter: string, platform: NodeJS.Platform, shell = ''): string {
  const args = `-m pip install ${SERVER_NAME}`;
  if (platform === 'win32') {
    const quoted = `"${interpreter}"`;
    // PowerShell runs a quoted path only through its call operator.
    return /pwsh|powershell/i.test(path.win32.basename(shell)) ? `& ${quoted} ${args}` : `${quoted} ${args}`;
  }
  const quoted = /^[\w@%+=:,./-]+$/.test(interpreter) ? interpreter : `'${interpreter.replace(/'/g, `'\\''`)}'`;
  return `${quoted} ${args}`;
}

/** The server reads its settings from `initializationOptions.acp` before asking for them. */
export function initializationOptions(serverSettings: object): Record<string, object> {
  return { [SERVER_SETTINGS_SECTION]: serverSettings };
}
