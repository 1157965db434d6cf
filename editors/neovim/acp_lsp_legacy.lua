-- acp-lsp for Neovim 0.7 - 0.10 (on >= 0.11 prefer lsp/acp_lsp.lua).
-- Source it from init.lua: dofile('/path/to/editors/neovim/acp_lsp_legacy.lua')
-- or copy it into your config. One server per project root (the nearest
-- directory holding acp.toml), started when a file below it gets a filetype;
-- no other file starts it, not even in a git repository. A plan's sandbox
-- copy (what "Preview plan" opens) joins a running client instead.
local cmd = { 'acp-lsp' } -- add '--data-dir', '/path' or '--acp', 'https://...' here
-- Server settings (docs/editors.md lists them); nil means the defaults, e.g.
-- local settings = { acp = { runOn = 'change', debounceMs = 300 } }
local settings = nil
-- The filetypes to start for; nil means every file below an acp.toml, e.g.
-- local filetypes = { 'python', 'toml' }
local filetypes = nil

-- The nearest directory holding acp.toml above `file`, else nil.
local function project_root(file)
  local marker = vim.fn.findfile('acp.toml', vim.fn.fnamemodify(file, ':p:h') .. ';')
  if marker == '' then
    return nil
  end
  return vim.fn.fnamemodify(marker, ':p:h')
end

-- Where the backend keeps plans' sandboxes: <data dir>/sandboxes, the data
-- dir as acp-lsp finds it (--data-dir in `cmd`, else $ACP_DATA_DIR, else
-- $XDG_DATA_HOME/acp-lsp, else ~/.local/share/acp-lsp).
local function sandboxes_dir()
  local dir
  for i, arg in ipairs(cmd) do
    if arg == '--data-dir' then
      dir = cmd[i + 1]
    elseif vim.startswith(arg, '--data-dir=') then
      dir = arg:sub(#'--data-dir=' + 1)
    end
  end
  local function env(name)
    local value = vim.env[name]
    return value ~= '' and value or nil
  end
  dir = dir or env('ACP_DATA_DIR')
  if not dir then
    dir = (env('XDG_DATA_HOME') or (vim.loop.os_homedir() .. '/.local/share')) .. '/acp-lsp'
  end
  if vim.startswith(dir, '~') then
    dir = vim.loop.os_homedir() .. dir:sub(2)
  end
  return (vim.fn.fnamemodify(dir, ':p'):gsub('/$', '')) .. '/sandboxes'
end

-- Whether `file` lies under `dir`, as named or with symlinks resolved.
local function under(file, dir)
  local real_file, real_dir = vim.loop.fs_realpath(file), vim.loop.fs_realpath(dir)
  return vim.startswith(file, dir .. '/')
    or (real_file ~= nil and real_dir ~= nil and vim.startswith(real_file, real_dir .. '/'))
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

local clients_by_root = {} -- the clients this file started, by root

-- The running client a sandbox copy joins: the one whose acp.toml the
-- copy's is a copy of, else the first started. Any acp-lsp places the copy
-- in the session of the plan's resource (the backend says which); this only
-- keeps it with its own project when several are open.
local function owner(file)
  local running = {}
  for root, id in pairs(clients_by_root) do
    if not vim.lsp.client_is_stopped(id) then
      table.insert(running, { root = root, id = id })
    end
  end
  table.sort(running, function(a, b) return a.id < b.id end)
  local sandbox = project_root(file)
  local copy = sandbox and read(sandbox .. '/acp.toml')
  for _, client in ipairs(running) do
    if copy and read(client.root .. '/acp.toml') == copy then
      return client.id
    end
  end
  return running[1] and running[1].id
end

local function attach(buf, root)
  local config = { name = 'acp_lsp', cmd = cmd, root_dir = root, settings = settings }
  if vim.lsp.start then -- 0.8+: finds or starts the client for this root
    clients_by_root[root] = vim.lsp.start(config, { bufnr = buf }) or clients_by_root[root]
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

local told = {} -- sandbox copies already told that no client shows them

vim.api.nvim_create_autocmd('FileType', {
  group = vim.api.nvim_create_augroup('acp_lsp', { clear = true }),
  pattern = filetypes or '*',
  callback = function(args)
    if vim.bo[args.buf].buftype ~= '' then
      return
    end
    local file = vim.api.nvim_buf_get_name(args.buf)
    if file ~= '' and under(file, sandboxes_dir()) then
      local id = owner(file)
      if id then
        vim.lsp.buf_attach_client(args.buf, id)
      elseif not told[file] then -- start none: open a file of the project first
        told[file] = true
        vim.notify(
          'acp-lsp: ' .. file .. " is a plan's sandbox copy; it joins the client of its "
            .. 'project: open a file of the project first, then this copy again',
          vim.log.levels.INFO
        )
      end
      return
    end
    local root = project_root(file)
    if root then
      attach(args.buf, root)
    end
  end,
})
