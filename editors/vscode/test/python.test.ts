// Which interpreter the Python extension has selected, through a stand-in of
// its public API (`ms-python.python`'s exports, as `@vscode/python-extension`
// types them): tests/editors/test_vscode.py runs this.
import { test } from 'node:test';
import * as assert from 'node:assert/strict';
import { EnvironmentPath, PythonExtensionApi, ResolvedEnvironment, selectedInterpreter } from '../src/python';

type Resource = { fsPath: string };

/** The API with `active` selected, resolved to `executable` (or not resolvable). */
function stub(
  active: EnvironmentPath,
  resolve: (environment: EnvironmentPath | string) => Promise<ResolvedEnvironment | undefined>,
  asked: (Resource | undefined)[] = [],
): PythonExtensionApi<Resource> {
  return {
    environments: {
      getActiveEnvironmentPath: (resource) => {
        asked.push(resource);
        return active;
      },
      resolveEnvironment: resolve,
    },
  };
}

const folder = { fsPath: '/w/project' };

test("the selected environment's interpreter, for the workspace folder", async () => {
  const asked: (Resource | undefined)[] = [];
  const api = stub(
    { id: 'venv', path: '/w/project/.venv' },
    async (environment) => {
      assert.deepEqual(environment, { id: 'venv', path: '/w/project/.venv' });
      return { executable: { uri: { fsPath: '/w/project/.venv/bin/python' } } };
    },
    asked,
  );
  assert.equal(await selectedInterpreter(api, folder), '/w/project/.venv/bin/python');
  assert.deepEqual(asked, [folder]);
});

test('nothing usable: no interpreter, never an error', async () => {
  // Nothing selected: the bare default `python`, which does not resolve.
  const unselected = stub({ id: 'DEFAULT_PYTHON', path: 'python' }, async () => undefined);
  assert.equal(await selectedInterpreter(unselected, folder), undefined);
  // An environment without its own interpreter (a bare conda env).
  const bare = stub({ id: 'conda', path: '/opt/conda/envs/empty' }, async () => ({ executable: { uri: undefined } }));
  assert.equal(await selectedInterpreter(bare, folder), undefined);
  // An API that throws, or rejects.
  const throwing: PythonExtensionApi<Resource> = {
    environments: {
      getActiveEnvironmentPath: () => {
        throw new Error('not ready');
      },
      resolveEnvironment: async () => undefined,
    },
  };
  assert.equal(await selectedInterpreter(throwing, folder), undefined);
  const rejecting = stub({ id: 'x', path: '/x/bin/python' }, () => Promise.reject(new Error('boom')));
  assert.equal(await selectedInterpreter(rejecting, folder), undefined);
  // No Python extension, or one too old to have `environments`.
  assert.equal(await selectedInterpreter(undefined, folder), undefined);
  assert.equal(await selectedInterpreter({}, folder), undefined);
});

test('a Python extension that never resolves is skipped after the timeout', async () => {
  const hanging = stub({ id: 'x', path: '/x/bin/python' }, () => new Promise(() => undefined));
  const started = Date.now();
  assert.equal(await selectedInterpreter(hanging, folder, 50), undefined);
  assert.ok(Date.now() - started < 2000);
});
