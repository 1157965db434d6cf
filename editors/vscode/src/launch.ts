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
  workspaceFolders: readonly string[];
  /** The Python extension's selected interpreter, when that extension is there. */
  pythonInterpreter?: string;
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

function isExecutable(file: string): boolean {
  try {
    fs.accessSync(file, fs.constants.X_OK);
    return fs.statSync(file).isFile();
  } catch {
    return false;
  }
}

function* candidates(places: SearchPlaces): Generator<Candidate> {
  const windows = places.platform === 'win32';
  const paths = windows ? path.win32 : path.posix;
  const exe = windows ? `${SERVER_NAME}.exe` : SERVER_NAME;
  const binDir = windows ? 'Scripts' : 'bin';
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
  // A bare `python` (no directory) says nothing about where acp-lsp would be.
  if (places.pythonInterpreter && paths.isAbsolute(places.pythonInterpreter)) {
    const command = paths.join(paths.dirname(places.pythonInterpreter), exe);
    yield { command, source: "the Python extension's selected interpreter", place: command };
  }
  const pipxCommand = paths.join(places.env.PIPX_BIN_DIR || paths.join(places.home, '.local', 'bin'), exe);
  yield { command: pipxCommand, source: "pipx's bin directory", place: pipxCommand };
  const pathDirs = (places.env.PATH ?? places.env.Path ?? '').split(windows ? ';' : ':').filter((dir) => dir !== '');
  for (const dir of pathDirs) {
    yield { command: paths.join(dir, exe), source: 'PATH', place: 'PATH' };
  }
}

/**
 * The acp-lsp to start when `acpLsp.path` is empty. The extension host's PATH
 * comes from the login shell, not the terminal a user installed acp-lsp from,
 * so PATH is the last place looked at, not the only one.
 */
export function findServer(places: SearchPlaces, executable: (file: string) => boolean = isExecutable): Search {
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
export function hostPlaces(workspaceFolders: readonly string[], pythonInterpreter?: string): SearchPlaces {
  return { workspaceFolders, pythonInterpreter, env: process.env, platform: process.platform, home: os.homedir() };
}

export function serverExecutable(settings: LaunchSettings): Executable {
  const command = settings.path.trim() || SERVER_NAME;
  return { command, args: [...settings.args] };
}

/** The one message a user sees when no server can be found: what to do, exactly. */
export function notFoundMessage(search: Search): string {
  return (
    `${SERVER_NAME} was not found (looked in: ${search.tried.join(', ')}). ` +
    `Install acp-lsp into this folder's .venv or with pipx, or set ${CLIENT_ID}.path to the ${SERVER_NAME} executable.`
  );
}

/** The server reads its settings from `initializationOptions.acp` before asking for them. */
export function initializationOptions(serverSettings: object): Record<string, object> {
  return { [SERVER_SETTINGS_SECTION]: serverSettings };
}
