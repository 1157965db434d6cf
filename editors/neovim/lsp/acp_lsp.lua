-- acp-lsp for Neovim >= 0.11. Put this file on 'runtimepath' as lsp/acp_lsp.lua
-- (e.g. ~/.config/nvim/lsp/acp_lsp.lua) and call vim.lsp.enable('acp_lsp').
-- Override any field with vim.lsp.config('acp_lsp', { ... }).
---@type vim.lsp.Config
return {
  -- Add '--data-dir', '/path' or '--acp', 'https://...' to use another backend.
  cmd = { 'acp-lsp' },
  -- No `filetypes`: validations cover every file of a registered resource,
  -- so the server starts for any file below an acp.toml and for no other
  -- (not a git root: that would start it in every repository). To start it
  -- only for some files, list them: filetypes = { 'python', 'toml' },
  root_markers = { 'acp.toml' },
  workspace_required = true,
  -- Server settings (docs/editors.md lists them); unset means the defaults:
  -- settings = { acp = { runOn = 'change', debounceMs = 300 } },
}
