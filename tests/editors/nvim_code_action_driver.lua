-- Drives a headless Neovim >= 0.11 through the demo's quick fix, as a user
-- would: open inventory.py, save (the run shows ruff's findings), put the
-- cursor on the unused import, pick "Fix with ruff" from
-- vim.lsp.buf.code_action, see the line go, undo it and redo it, save again
-- and wait for the Error to clear. Writes what Neovim holds to
-- $ACP_RESULT_FILE as JSON.
local env = vim.env
local result = { steps = {} }

local function step(name)
  table.insert(result.steps, name)
end

local function lines(buf)
  return vim.api.nvim_buf_get_lines(buf, 0, -1, false)
end

local function unused_import(buf)
  for _, d in ipairs(vim.diagnostic.get(buf)) do
    if d.source == 'ruff' and d.message:find('imported but unused') then
      return d
    end
  end
end

local function run()
  vim.opt.runtimepath:append(env.ACP_NVIM_CONFIG_DIR)
  vim.lsp.enable('acp_lsp')
  vim.cmd('filetype on')
  vim.cmd('edit ' .. vim.fn.fnameescape(env.ACP_DEMO_FILE))
  local buf = vim.api.nvim_get_current_buf()
  local attached = vim.wait(15000, function()
    local clients = vim.lsp.get_clients({ bufnr = buf })
    return #clients > 0 and clients[1].initialized == true
  end, 20)
  if not attached then
    result.error = 'no initialized acp_lsp client attached to the buffer'
    return
  end
  vim.cmd('write')
  if not vim.wait(20000, function() return unused_import(buf) ~= nil end, 20) then
    result.error = "ruff's unused-import Error never showed"
    return
  end
  local diagnostic = unused_import(buf)
  result.severity = diagnostic.severity
  result.line_before = lines(buf)[diagnostic.lnum + 1]
  result.count_before = #lines(buf)
  step('diagnostic')

  -- What the menu lists at the cursor.
  vim.api.nvim_win_set_cursor(0, { diagnostic.lnum + 1, 0 })
  local params = vim.lsp.util.make_range_params(0, 'utf-16')
  params.context = { diagnostics = vim.lsp.diagnostic.from(vim.diagnostic.get(buf, { lnum = diagnostic.lnum })) }
  local answers = vim.lsp.buf_request_sync(buf, 'textDocument/codeAction', params, 10000) or {}
  result.titles = {}
  for _, answer in pairs(answers) do
    for _, action in ipairs(answer.result or {}) do
      table.insert(result.titles, action.title)
    end
  end

  -- Pick "Fix with ruff" as a user would; apply=true takes the one match.
  local tick = vim.api.nvim_buf_get_changedtick(buf)
  vim.lsp.buf.code_action({
    filter = function(action)
      return action.title:find('^Fix with ruff') ~= nil and action.title:find('unused import') ~= nil
    end,
    apply = true,
  })
  if not vim.wait(10000, function() return vim.api.nvim_buf_get_changedtick(buf) ~= tick end, 20) then
    result.error = 'the quick fix never changed the buffer'
    return
  end
  result.count_after = #lines(buf)
  result.line_after = lines(buf)[diagnostic.lnum + 1]
  result.modified = vim.bo[buf].modified
  step('fixed')

  vim.cmd('undo')
  result.line_after_undo = lines(buf)[diagnostic.lnum + 1]
  vim.cmd('redo')
  result.line_after_redo = lines(buf)[diagnostic.lnum + 1]
  step('undo')

  vim.cmd('write') -- the next run: the Error clears, ruff's other findings come back
  local function ruff_count()
    local count = 0
    for _, d in ipairs(vim.diagnostic.get(buf)) do
      if d.source == 'ruff' then
        count = count + 1
      end
    end
    return count
  end
  result.cleared = vim.wait(20000, function()
    return unused_import(buf) == nil and ruff_count() > 0
  end, 20)
  result.ruff_left = ruff_count()
  step('cleared')
end

local here = vim.fn.fnamemodify(debug.getinfo(1, 'S').source:sub(2), ':h')
dofile(here .. '/nvim_finish.lua')(run, result)
