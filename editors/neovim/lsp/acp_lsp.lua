-- acp-lsp for Neovim >= 0.11. Put this file on 'runtimepath' as lsp/acp_lsp.lua
-- (e.g. ~/.config/nvim/lsp/acp_lsp.lua) and call vim.lsp.enable('acp_lsp').
-- Override any field with vim.lsp.config('acp_lsp', { ... }).

-- A plan's sandbox copy (what "Preview plan" opens) lies under
-- <data dir>/sandboxes/<plan id>/ and holds its own acp.toml, so the marker
-- rule alone would start a second server there. The data dir is acp-lsp's:
-- --data-dir in `cmd`, else $ACP_DATA_DIR, else $XDG_DATA_HOME/acp-lsp, else
-- ~/.local/share/acp-lsp.
local function sandboxes_dir(config)
  local cmd = type(config.cmd) == 'table' and config.cmd or {}
  local dir
  for i, arg in ipairs(cmd) do
    if arg == '--data-dir' then
      dir = cmd[i + 1]
    elseif vim.startswith(arg, '--data-dir=') then
      dir = arg:sub(#'--data-dir=' + 1)
    end
  end
  local function env(name)
    local value = (config.cmd_env or {})[name] or vim.env[name]
    return value ~= '' and value or nil
  end
  dir = dir or env('ACP_DATA_DIR')
  if not dir then
    dir = (env('XDG_DATA_HOME') or (vim.uv.os_homedir() .. '/.local/share')) .. '/acp-lsp'
  end
  return vim.fs.normalize(dir) .. '/sandboxes'
end

-- Whether `file` lies under `dir`, as named or with symlinks resolved.
local function under(file, dir)
  local real_file, real_dir = vim.uv.fs_realpath(file), vim.uv.fs_realpath(dir)
  return vim.startswith(vim.fs.normalize(file), dir .. '/')
    or (
      real_file ~= nil
      and real_dir ~= nil
      and vim.startswith(vim.fs.normalize(real_file), vim.fs.normalize(real_dir) .. '/')
    )
end

local function read(path)
  local handle = io.open(path, 'rb')
  if not handle then
    return nil
  end
  local text = handle:read('*a')
  handle:close()
  return text
end

-- The running client a sandbox copy joins: the one whose acp.toml the
-- copy's is a copy of, else the first. Any acp-lsp places the copy in the
-- session of the plan's resource (the backend says which); this only keeps
-- it with its own project when several are open.
local function owner(bufnr)
  -- (_uninitialized: a client still starting is joined too, as Neovim would.)
  local clients = vim.lsp.get_clients({ name = 'acp_lsp', _uninitialized = true })
  local sandbox = vim.fs.root(bufnr, 'acp.toml')
  local copy = sandbox and read(sandbox .. '/acp.toml')
  for _, client in ipairs(clients) do
    if copy and client.root_dir and read(client.root_dir .. '/acp.toml') == copy then
      return client
    end
  end
  return clients[1]
end

local told = {} -- sandbox copies already told that no client shows them

---@type vim.lsp.Config
return {
  -- Add '--data-dir', '/path' or '--acp', 'https://...' to use another backend.
  cmd = { 'acp-lsp' },
  -- No `filetypes`: validations cover every file of a registered resource,
  -- so the server starts for any file below an acp.toml and for no other
  -- (not a git root: that would start it in every repository). To start it
  -- only for some files, list them: filetypes = { 'python', 'toml' },
  --
  -- The root: the nearest folder holding acp.toml. A plan's sandbox copy
  -- instead joins a running acp_lsp client (its root_dir is reused, so
  -- Neovim attaches the buffer to that client); with none running it starts
  -- nothing and says so once: open a file of the project, then the copy.
  root_dir = function(bufnr, on_dir)
    local file = vim.api.nvim_buf_get_name(bufnr)
    if file ~= '' and under(file, sandboxes_dir(vim.lsp.config.acp_lsp or {})) then
      local client = owner(bufnr)
      if client and client.root_dir then
        on_dir(client.root_dir)
      elseif not told[file] then
        told[file] = true
        vim.notify(
          'acp-lsp: ' .. file .. " is a plan's sandbox copy; it joins the client of its "
            .. 'project: open a file of the project first, then this copy again',
          vim.log.levels.INFO
        )
      end
      return
    end
    local root = vim.fs.root(bufnr, 'acp.toml')
    if root then
      on_dir(root)
    end
  end,
  workspace_required = true,
  -- Server settings (docs/editors.md lists them); unset means the defaults:
  -- settings = { acp = { runOn = 'change', debounceMs = 300 } },
}
