// Where the extension looks for acp-lsp when `acpLsp.path` is empty, on real
// files in a temp directory (tests/editors/test_vscode.py runs this).
import { chmodSync, mkdirSync, mkdtempSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { dirname, join } from 'node:path';
import { test } from 'node:test';
import * as assert from 'node:assert/strict';
import { findServer, notFoundMessage, SearchPlaces } from '../src/launch';

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

test("the folder's .venv comes first, then venv, a parent's, interpreter, pipx, PATH", () => {
  const root = mkdtempSync(join(tmpdir(), 'acp-lsp-find-'));
  const interpreter = join(root, 'pyenv', 'bin', 'python');
  const order = [
    [join(root, 'path-bin', 'acp-lsp'), 'PATH'],
    [join(root, 'home', '.local', 'bin', 'acp-lsp'), "pipx's bin directory"],
    [join(root, 'pyenv', 'bin', 'acp-lsp'), "the Python extension's selected interpreter"],
    [join(root, 'venv', 'bin', 'acp-lsp'), join(root, 'venv')],
    [join(root, '.venv', 'bin', 'acp-lsp'), join(root, '.venv')],
    [join(root, 'project', 'venv', 'bin', 'acp-lsp'), join(root, 'project', 'venv')],
    [join(root, 'project', '.venv', 'bin', 'acp-lsp'), join(root, 'project', '.venv')],
  ];
  for (const [file, source] of order) {
    // Each newly installed place wins over every one installed before it.
    executable(file);
    assert.deepEqual(findServer(places(root, { pythonInterpreter: interpreter })).found, { command: file, source });
  }
});

test('an interpreter given as a bare command is not a place', () => {
  const root = mkdtempSync(join(tmpdir(), 'acp-lsp-find-'));
  const search = findServer(places(root, { pythonInterpreter: 'python3' }), () => false);
  assert.ok(!search.tried.some((place) => place.startsWith('acp-lsp') || place.startsWith('python')), search.tried.join());
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

test('nothing found: the message lists every place and says what to do', () => {
  const root = mkdtempSync(join(tmpdir(), 'acp-lsp-find-'));
  const search = findServer(places(root));
  assert.equal(search.found, undefined);
  const message = notFoundMessage(search);
  assert.ok(
    message.includes(`(looked in: the .venv or venv of ${join(root, 'project')} or a folder above it, ` +
      `${join(root, 'home', '.local', 'bin', 'acp-lsp')}, PATH)`),
    message,
  );
  assert.match(message, /set acpLsp\.path/);
});
