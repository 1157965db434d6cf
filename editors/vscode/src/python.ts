// The Python extension's (ms-python.python) public API, as much of it as the
// extension uses: which interpreter the user selected for the workspace. The
// types are the minimal subset of those `@vscode/python-extension` (1.0.x)
// publishes, written here so that no runtime package is added; they are
// structural, and free of the `vscode` module, so the Node tests run this
// exact code against a stand-in of the API.

export const PYTHON_EXTENSION_ID = 'ms-python.python';

/** How long the Python extension may take to activate, or to resolve the interpreter, before it is skipped. */
export const RESOLVE_TIMEOUT_MS = 10_000;

/** `vscode.Uri` as far as it is read here. */
export interface FileUri {
  readonly fsPath: string;
}

/** `EnvironmentPath`: an environment folder, or a Python executable. */
export interface EnvironmentPath {
  readonly id: string;
  readonly path: string;
}

/** `ResolvedEnvironment`, the part read: the interpreter, if the environment has one. */
export interface ResolvedEnvironment {
  readonly executable: {
    /** `undefined` for an environment without its own Python (a bare conda env). */
    readonly uri: FileUri | undefined;
  };
}

export interface Disposable {
  dispose(): unknown;
}

/** `PythonExtension['environments']`, the part used. `R`: a `vscode.Uri` or workspace folder. */
export interface PythonEnvironments<R> {
  getActiveEnvironmentPath(resource?: R): EnvironmentPath;
  resolveEnvironment(environment: EnvironmentPath | string): Promise<ResolvedEnvironment | undefined>;
  readonly onDidChangeActiveEnvironmentPath?: (listener: (event: EnvironmentPath) => unknown) => Disposable;
}

/** What `ms-python.python` exports from its `activate`, the part used. */
export interface PythonExtensionApi<R> {
  readonly environments?: PythonEnvironments<R>;
}

/** `promise`'s value, or undefined once `ms` have passed. */
export function withTimeout<T>(promise: Promise<T>, ms: number): Promise<T | undefined> {
  let timer: NodeJS.Timeout | undefined;
  const timeout = new Promise<undefined>((resolve) => {
    timer = setTimeout(() => resolve(undefined), ms);
  });
  return Promise.race([promise, timeout]).finally(() => clearTimeout(timer));
}

/**
 * The executable of the interpreter the Python extension has selected for
 * `resource`, or undefined: no selection it can resolve (nothing selected
 * comes back as the bare default `python`), an environment without its own
 * interpreter, an API too old to have `environments`, or one that fails.
 * An unusable Python extension only removes one place to look.
 */
export async function selectedInterpreter<R>(
  api: PythonExtensionApi<R> | undefined,
  resource: R | undefined,
  timeoutMs = RESOLVE_TIMEOUT_MS,
): Promise<string | undefined> {
  const environments = api?.environments;
  if (!environments || typeof environments.getActiveEnvironmentPath !== 'function') {
    return undefined;
  }
  try {
    const active = environments.getActiveEnvironmentPath(resource);
    if (!active || typeof active.path !== 'string') {
      return undefined;
    }
    const resolved = await withTimeout(environments.resolveEnvironment(active), timeoutMs);
    const executable = resolved?.executable?.uri?.fsPath;
    return typeof executable === 'string' && executable !== '' ? executable : undefined;
  } catch {
    return undefined;
  }
}
