// How the extension starts and configures acp-lsp. Kept free of the `vscode`
// module so the Node test harness runs this exact code against the real server.

/** The extension's own settings live under `acpLsp.*`; `acp.*` belongs to the server. */
export const CLIENT_ID = 'acpLsp';
export const CLIENT_NAME = 'ACP Language Server';
export const SERVER_SETTINGS_SECTION = 'acp';

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

export function serverExecutable(settings: LaunchSettings): Executable {
  const command = settings.path.trim() || 'acp-lsp';
  return { command, args: [...settings.args] };
}

/** The server reads its settings from `initializationOptions.acp` before asking for them. */
export function initializationOptions(serverSettings: object): Record<string, object> {
  return { [SERVER_SETTINGS_SECTION]: serverSettings };
}
