// Where the extension looks for acp-lsp, on real files in a temp directory,
// and what it tells the user when it finds none (tests/editors/test_vscode.py
// runs this).
import { chmodSync, mkdirSync, mkdtempSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { dirname, join } from 'node:path';
import { test } from 'node:test';
import * as assert from 'node:assert/strict';
import {
  findServer,
  INSTALL,
  installCommand,
  interpreterScriptDirs,
  notFound,
  SearchPlaces,
  SET_PATH,
} from '../src/launch';

function executable(file: string): string {
  mkdirSync(dirname(file), { recursive: true });
  writeFileSync(file, '#!/bin/sh\n');
  chmodSync(file, 0o755);
  return file;
}

function places(root: string, extra: Partial<SearchPlaces> = {}): SearchPlaces {
  return {
    workspaceFolders: [join(root, 'project')],
    env: { PATH: join(root, 'path-bin') },
    platform: 'linux',
    home: join(root, 'home'),
    ...extra,
  };
}

test('the setting, then the selected interpreter, the venvs (the folder\'s first), pipx, PATH', () => {
  const root = mkdtempSync(join(tmpdir(), 'acp-lsp-find-'));
  const interpreter = join(root, 'pyenv', 'bin', 'python');
  const order = [
    [join(root, 'path-bin', 'acp-lsp'), 'PATH'],
    [join(root, 'home', '.local', 'bin', 'acp-lsp'), "pipx's bin directory"],
    [join(root, 'venv', 'bin', 'acp-lsp'), join(root, 'venv')],
    [join(root, '.venv', 'bin', 'acp-lsp'), join(root, '.venv')],
    [join(root, 'project', 'venv', 'bin', 'acp-lsp'), join(root, 'project', 'venv')],
    [join(root, 'project', '.venv', 'bin', 'acp-lsp'), join(root, 'project', '.venv')],
    [join(root, 'pyenv', 'bin', 'acp-lsp'), "the Python extension's selected interpreter"],
  ];
  for (const [file, source] of order) {
    // Each newly installed place wins over every one installed before it.
    executable(file);
    assert.deepEqual(findServer(places(root, { pythonInterpreter: interpreter })).found, { command: file, source });
  }
  // The setting wins over all of them, taken as it is (starting it says what is wrong).
  const configured = join(root, 'nowhere', 'acp-lsp');
  const search = findServer(places(root, { configured: `  ${configured} `, pythonInterpreter: interpreter }));
  assert.deepEqual(search, {
    found: { command: configured, source: 'the acpLsp.path setting' },
    tried: ['the acpLsp.path setting'],
  });
  // Blank is not set.
  assert.equal(findServer(places(root, { configured: '  ' })).found?.source, join(root, 'project', '.venv'));
});

test('the selected interpreter is looked at before the folders, and listed first', () => {
  const root = mkdtempSync(join(tmpdir(), 'acp-lsp-find-'));
  const interpreter = join(root, 'pyenv', 'bin', 'python3.12');
  const search = findServer(places(root, { pythonInterpreter: interpreter }), () => false);
  assert.deepEqual(search.tried, [
    join(root, 'pyenv', 'bin', 'acp-lsp'),
    `the .venv or venv of ${join(root, 'project')} or a folder above it`,
    join(root, 'home', '.local', 'bin', 'acp-lsp'),
    'PATH',
  ]);
});

test('an interpreter given as a bare command is not a place', () => {
  const root = mkdtempSync(join(tmpdir(), 'acp-lsp-find-'));
  const search = findServer(places(root, { pythonInterpreter: 'python3' }), () => false);
  const named = search.tried.filter((place) => place.startsWith('acp-lsp') || place.startsWith('python'));
  assert.deepEqual(named, [], search.tried.join());
  assert.equal(search.tried.length, 3); // the venvs, pipx, PATH
});

test('PIPX_BIN_DIR replaces ~/.local/bin', () => {
  const root = mkdtempSync(join(tmpdir(), 'acp-lsp-find-'));
  const pipx = executable(join(root, 'pipx-bin', 'acp-lsp'));
  executable(join(root, 'home', '.local', 'bin', 'acp-lsp'));
  const search = findServer(places(root, { env: { PIPX_BIN_DIR: join(root, 'pipx-bin') } }));
  assert.deepEqual(search.found, { command: pipx, source: "pipx's bin directory" });
});

test('a file that is not executable is passed over', () => {
  const root = mkdtempSync(join(tmpdir(), 'acp-lsp-find-'));
  const venv = join(root, 'project', '.venv', 'bin', 'acp-lsp');
  mkdirSync(dirname(venv), { recursive: true });
  writeFileSync(venv, '');
  const onPath = executable(join(root, 'path-bin', 'acp-lsp'));
  assert.equal(findServer(places(root)).found?.command, onPath);
});

test('nothing found: one message that lists every place, with Install and Set buttons', () => {
  const root = mkdtempSync(join(tmpdir(), 'acp-lsp-find-'));
  const interpreter = join(root, 'pyenv', 'bin', 'python');
  const search = findServer(places(root, { pythonInterpreter: interpreter }));
  assert.equal(search.found, undefined);
  const { message, actions } = notFound(search, interpreter, 'linux');
  assert.ok(
    message.includes(`(looked in: ${join(root, 'pyenv', 'bin', 'acp-lsp')}, ` +
      `the .venv or venv of ${join(root, 'project')} or a folder above it, ` +
      `${join(root, 'home', '.local', 'bin', 'acp-lsp')}, PATH)`),
    message,
  );
  assert.ok(message.includes(`selected interpreter (${interpreter})`), message);
  assert.match(message, /set acpLsp\.path/);
  assert.deepEqual(actions, [INSTALL, SET_PATH]);
  assert.deepEqual(actions, ['Install in the selected interpreter', 'Set acpLsp.path']);
});

test('nothing found and no interpreter to install into: only Set acpLsp.path', () => {
  const root = mkdtempSync(join(tmpdir(), 'acp-lsp-find-'));
  for (const interpreter of [undefined, 'python']) {
    const search = findServer(places(root, { pythonInterpreter: interpreter }));
    const { message, actions } = notFound(search, interpreter, 'linux');
    assert.deepEqual(actions, ['Set acpLsp.path']);
    assert.match(message, /into this folder's \.venv or with pipx, or set acpLsp\.path/);
  }
});

test("a Windows interpreter's scripts: beside a venv's python.exe, in Scripts\\ of a base install", () => {
  assert.deepEqual(interpreterScriptDirs('C:\\p\\.venv\\Scripts\\python.exe', 'win32'), ['C:\\p\\.venv\\Scripts']);
  assert.deepEqual(interpreterScriptDirs('C:\\Python312\\python.exe', 'win32'), [
    'C:\\Python312',
    'C:\\Python312\\Scripts',
  ]);
  assert.deepEqual(interpreterScriptDirs('/opt/conda/envs/x/bin/python', 'linux'), ['/opt/conda/envs/x/bin']);
  assert.deepEqual(interpreterScriptDirs('python3', 'linux'), []);
  const search = findServer(
    {
      pythonInterpreter: 'C:\\Python312\\python.exe',
      workspaceFolders: [],
      env: {},
      platform: 'win32',
      home: 'C:\\Users\\u',
    },
    (file) => file === 'C:\\Python312\\Scripts\\acp-lsp.exe',
  );
  assert.deepEqual(search.found, {
    command: 'C:\\Python312\\Scripts\\acp-lsp.exe',
    source: "the Python extension's selected interpreter",
  });
});

test("the install line runs the interpreter's own pip, quoted for the terminal's shell", () => {
  const venv = '/w/.venv/bin/python';
  assert.equal(installCommand(venv, 'linux', '/bin/bash'), `${venv} -m pip install acp-lsp`);
  assert.equal(
    installCommand("/home/me/my env/it's/bin/python", 'darwin', '/bin/zsh'),
    `'/home/me/my env/it'\\''s/bin/python' -m pip install acp-lsp`,
  );
  const windows = 'C:\\Program Files\\Python312\\python.exe';
  assert.equal(
    installCommand(windows, 'win32', 'C:\\Windows\\System32\\WindowsPowerShell\\v1.0\\powershell.exe'),
    `& "${windows}" -m pip install acp-lsp`,
  );
  const cmd = 'C:\\Windows\\System32\\cmd.exe';
  assert.equal(installCommand(windows, 'win32', cmd), `"${windows}" -m pip install acp-lsp`);
});
