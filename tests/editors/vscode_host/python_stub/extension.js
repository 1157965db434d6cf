// Test-only stand-in for the Python extension (ms-python.python), installed
// next to acp-lsp's in tests/editors/test_vscode_host.py: the marketplace that
// has the real one is not reachable from CI. It exports the part of the real
// extension's public API that acp-lsp's extension calls, with the shapes that
// `@vscode/python-extension` documents: environments.getActiveEnvironmentPath
// and resolveEnvironment. The selected interpreter is
// $ACP_PYTHON_STUB_INTERPRETER; without it nothing is selected, which the real
// extension reports as the bare default `python` that does not resolve.
'use strict';
const path = require('path');
const vscode = require('vscode');

exports.activate = function activate() {
  const interpreter = process.env.ACP_PYTHON_STUB_INTERPRETER;
  const active = interpreter ? { id: interpreter, path: interpreter } : { id: 'DEFAULT_PYTHON', path: 'python' };
  const changed = new vscode.EventEmitter();
  return {
    ready: Promise.resolve(),
    environments: {
      getActiveEnvironmentPath: () => active,
      resolveEnvironment: async (environment) => {
        const wanted = typeof environment === 'string' ? environment : environment.path;
        if (!interpreter || wanted !== interpreter) {
          return undefined;
        }
        return {
          ...active,
          executable: {
            uri: vscode.Uri.file(interpreter),
            bitness: '64-bit',
            sysPrefix: path.dirname(path.dirname(interpreter)),
          },
          environment: undefined,
          version: undefined,
          tools: [],
        };
      },
      onDidChangeActiveEnvironmentPath: changed.event,
      known: [],
      onDidChangeEnvironments: new vscode.EventEmitter().event,
    },
  };
};
