-- Drives a headless Neovim as a user would: load a config shipped in
-- editors/neovim, open a file of the demo project, save it, and wait for the
-- diagnostics. Writes what Neovim itself holds to $ACP_RESULT_FILE as JSON.
-- Runs on Neovim 0.7 and 0.11 alike (hence vim.fn.json_encode).
local env = vim.env
local result = { diagnostics = {} }

local function clients(buf)
  if vim.lsp.get_clients then
    return vim.lsp.get_clients({ bufnr = buf })
  end
  return vim.tbl_values(vim.lsp.buf_get_clients(buf))
end

-- Work-done progress as Neovim receives it.
result.progress = {}
local default_progress_handler = vim.lsp.handlers['$/progress']
vim.lsp.handlers['$/progress'] = function(err, params, ctx, config)
  if params and type(params.value) == 'table' then
    table.insert(result.progress, params.value.kind)
  end
  return default_progress_handler(err, params, ctx, config)
end

-- window/showMessage ends in vim.notify; keep what would have been shown.
result.notified = {}
vim.notify = function(message, level)
  table.insert(result.notified, tostring(message))
end

local function run()
  if env.ACP_NVIM_CONFIG == 'lsp' then -- Neovim >= 0.11: lsp/acp_lsp.lua
    vim.opt.runtimepath:append(env.ACP_NVIM_CONFIG_DIR)
    vim.lsp.enable('acp_lsp')
  else
    dofile(env.ACP_NVIM_CONFIG_DIR .. '/acp_lsp_legacy.lua')
  end
  vim.cmd('filetype on') -- -u NONE leaves detection off; a user's config has it on
  vim.cmd('edit ' .. vim.fn.fnameescape(env.ACP_DEMO_FILE))
  local buf = vim.api.nvim_get_current_buf()
  if env.ACP_NVIM_STOP_AFTER_OPEN == '1' then
    -- Opening a file starts (or skips) the client synchronously; count them
    -- all, initialized or not, then give a started one time to say anything.
    if vim.lsp.get_clients then
      result.clients_at_open = #vim.lsp.get_clients({ bufnr = buf, _uninitialized = true })
    else -- 0.7: no list holds uninitialized clients, but ids count up from 1
      result.clients_at_open = 0
      for id = 1, 10 do
        if vim.lsp.get_client_by_id(id) then
          result.clients_at_open = result.clients_at_open + 1
        end
      end
    end
    vim.wait(500, function() return false end, 20)
    result.messages = vim.fn.execute('messages')
    result.diagnostic_count = #vim.diagnostic.get(buf)
    return
  end

  local started = vim.wait(15000, function()
    local attached = clients(buf)
    return #attached > 0 and attached[1].initialized == true
  end, 20)
  if not started then
    result.error = 'no initialized acp_lsp client attached to the buffer'
    return
  end
  local client = clients(buf)[1]
  result.client_name = client.name
  result.root_dir = client.config.root_dir
  result.offset_encoding = client.offset_encoding
  -- Whether the server chose pull for this client (it pushes otherwise).
  result.server_offered_pull = client.server_capabilities.diagnosticProvider ~= nil

  vim.cmd('write') -- runOn = save: the save starts the validation run, connected or not yet

  local function has(severity)
    for _, d in ipairs(vim.diagnostic.get(buf)) do
      if d.severity == severity then
        return true
      end
    end
    return false
  end
  vim.wait(20000, function()
    return has(vim.diagnostic.severity.ERROR) and has(vim.diagnostic.severity.WARN)
  end, 20)
  vim.wait(5000, function() -- the run's progress ends after its results
    return result.progress[#result.progress] == 'end'
  end, 20)
  for _, d in ipairs(vim.diagnostic.get(buf)) do
    table.insert(result.diagnostics, {
      lnum = d.lnum,
      col = d.col,
      severity = d.severity,
      message = d.message,
      source = d.source,
    })
  end
end

local here = vim.fn.fnamemodify(debug.getinfo(1, 'S').source:sub(2), ':h')
dofile(here .. '/nvim_finish.lua')(run, result)
