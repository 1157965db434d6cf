-- Drives a headless Neovim through "Preview plan", as a user would: open
-- $ACP_DEMO_FILE (a file a plan with a sandbox changes), save it and wait for
-- the run's findings, then open the plan's sandbox copy of it: through the
-- "Preview plan" code action (the server's window/showDocument) where Neovim
-- has vim.lsp.buf.code_action's filter (0.10+), else `:edit $ACP_SANDBOX_FILE`.
-- Writes the clients, what each buffer is attached to and the diagnostics of
-- both buffers to $ACP_RESULT_FILE as JSON. Runs on Neovim 0.7 and 0.11.
local env = vim.env
local result = { progress = {} }

local default_progress_handler = vim.lsp.handlers['$/progress']
vim.lsp.handlers['$/progress'] = function(err, params, ctx, config)
  if params and type(params.value) == 'table' then
    table.insert(result.progress, params.value.kind)
  end
  return default_progress_handler(err, params, ctx, config)
end

-- Every client, initialized or not.
local function all_clients()
  local found = {}
  for id = 1, 20 do -- ids count up from 1 (0.7 has no list of uninitialized clients)
    local client = vim.lsp.get_client_by_id(id)
    if client then
      table.insert(found, client)
    end
  end
  return found
end

local function attached_ids(buf)
  local ids = {}
  for _, client in ipairs(all_clients()) do
    if vim.lsp.buf_is_attached(buf, client.id) then
      table.insert(ids, client.id)
    end
  end
  return ids
end

local function diagnostics(buf)
  local found = {}
  for _, d in ipairs(vim.diagnostic.get(buf)) do
    table.insert(found, { lnum = d.lnum, col = d.col, severity = d.severity, message = d.message, source = d.source })
  end
  return found
end

local function has_ruff(buf)
  for _, d in ipairs(vim.diagnostic.get(buf)) do
    if d.source == 'ruff' then
      return true
    end
  end
  return false
end

local function run()
  if env.ACP_NVIM_CONFIG == 'lsp' then
    vim.opt.runtimepath:append(env.ACP_NVIM_CONFIG_DIR)
    vim.lsp.enable('acp_lsp')
  else
    dofile(env.ACP_NVIM_CONFIG_DIR .. '/acp_lsp_legacy.lua')
  end
  vim.cmd('filetype on')
  vim.cmd('edit ' .. vim.fn.fnameescape(env.ACP_DEMO_FILE))
  local real = vim.api.nvim_get_current_buf()
  local started = vim.wait(15000, function()
    local ids = attached_ids(real)
    return #ids > 0 and vim.lsp.get_client_by_id(ids[1]).initialized == true
  end, 20)
  if not started then
    result.error = 'no initialized client attached to ' .. env.ACP_DEMO_FILE
    return
  end
  vim.cmd('write')
  if not vim.wait(20000, function() return has_ruff(real) end, 20) then
    result.error = "ruff's findings never showed on " .. env.ACP_DEMO_FILE
    return
  end
  vim.wait(5000, function() return result.progress[#result.progress] == 'end' end, 20)
  vim.wait(500, function() return false end, 20) -- anything still on its way
  result.before = diagnostics(real)

  if vim.fn.has('nvim-0.10') == 1 then -- "Preview plan", as a user picks it
    result.opened_by = 'preview'
    vim.lsp.buf.code_action({
      filter = function(action) return action.title:find('^Preview ') ~= nil end,
      apply = true,
    })
    local shown = vim.wait(10000, function() return vim.api.nvim_get_current_buf() ~= real end, 20)
    if not shown then
      result.error = '"Preview plan" opened no other buffer'
      return
    end
  else
    result.opened_by = 'edit'
    vim.cmd('edit ' .. vim.fn.fnameescape(env.ACP_SANDBOX_FILE))
  end
  local copy = vim.api.nvim_get_current_buf()
  result.copy_name = vim.api.nvim_buf_get_name(copy)
  result.clients_at_open = #all_clients()
  -- The plan's own findings show on the copy; then give any second client
  -- time to start and publish what it would (each diagnostic twice, before).
  result.copy_shown = vim.wait(10000, function() return #vim.diagnostic.get(copy) > 0 end, 20)
  vim.wait(2000, function() return false end, 20)

  result.clients = {}
  for _, client in ipairs(all_clients()) do
    table.insert(result.clients, { id = client.id, name = client.name, root_dir = client.config.root_dir })
  end
  result.real_attached = attached_ids(real)
  result.copy_attached = attached_ids(copy)
  result.after = diagnostics(real)
  result.copy = diagnostics(copy)
  result.messages = vim.fn.execute('messages')
end

local here = vim.fn.fnamemodify(debug.getinfo(1, 'S').source:sub(2), ':h')
dofile(here .. '/nvim_finish.lua')(run, result)
