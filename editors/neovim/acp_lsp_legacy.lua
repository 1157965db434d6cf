-- acp-lsp for Neovim 0.7 - 0.10 (on >= 0.11 prefer lsp/acp_lsp.lua).
-- Source it from init.lua: dofile('/path/to/editors/neovim/acp_lsp_legacy.lua')
-- or copy it into your config. One server per project root (the nearest
-- directory holding acp.toml), started when a file below it gets a filetype;
-- no other file starts it, not even in a git repository.
local cmd = { 'acp-lsp' } -- add '--data-dir', '/path' or '--acp', 'https://...' here
-- Server settings (docs/editors.md lists them); nil means the defaults, e.g.
-- local settings = { acp = { runOn = 'change', debounceMs = 300 } }
local settings = nil
-- The filetypes to start for; nil means every file below an acp.toml, e.g.
-- local filetypes = { 'python', 'toml' }
local filetypes = nil

-- The nearest directory holding acp.toml, else nil.
local function project_root(file)
  local marker = vim.fn.findfile('acp.toml', vim.fn.fnamemodify(file, ':p:h') .. ';')
  if marker == '' then
    return nil
  end
  return vim.fn.fnamemodify(marker, ':p:h')
end

local clients_by_root = {} -- Neovim 0.7 only: it has no vim.lsp.start to reuse clients

local function attach(buf, root)
  local config = { name = 'acp_lsp', cmd = cmd, root_dir = root, settings = settings }
  if vim.lsp.start then -- 0.8+: finds or starts the client for this root
    vim.lsp.start(config, { bufnr = buf })
    return
  end
  local id = clients_by_root[root]
  if not id or vim.lsp.client_is_stopped(id) then
    id = vim.lsp.start_client(config)
    clients_by_root[root] = id
  end
  if id then
    vim.lsp.buf_attach_client(buf, id)
  end
end

vim.api.nvim_create_autocmd('FileType', {
  group = vim.api.nvim_create_augroup('acp_lsp', { clear = true }),
  pattern = filetypes or '*',
  callback = function(args)
    if vim.bo[args.buf].buftype ~= '' then
      return
    end
    local root = project_root(vim.api.nvim_buf_get_name(args.buf))
    if root then
      attach(args.buf, root)
    end
  end,
})
