-- Drives a headless Neovim >= 0.11 with editors/neovim/lsp/acp_lsp.lua through
-- hover and workspace symbols, as a user would: open the demo file, save it,
-- wait for the ruff Error, then `vim.lsp.buf.hover()` on the typo and inside a
-- function, `vim.lsp.buf.workspace_symbol('ruff')`, and hover on the line a plan
-- changed in $ACP_PLAN_FILE, with the code actions listed where the hover
-- names a fix. Then the typo after unsaved edits (a line added above it, the
-- typo's own line changed) and right after the save, before and after the
-- new run answers. What Neovim shows goes to $ACP_RESULT_FILE as JSON.
local env = vim.env
local result = { hovers = {} }

-- Every hover float's lines, as Neovim renders them.
local shown = nil
local open_preview = vim.lsp.util.open_floating_preview
vim.lsp.util.open_floating_preview = function(contents, syntax, opts)
  shown = { syntax = syntax, text = table.concat(contents, '\n') }
  return open_preview(contents, syntax, opts)
end

local function attached(buf)
  return vim.wait(15000, function()
    local clients = vim.lsp.get_clients({ bufnr = buf })
    return #clients > 0 and clients[1].initialized == true
  end, 20)
end

-- Close hover floats, as moving the cursor would: a second hover while one
-- is open would move into it instead.
local function close_floats()
  for _, win in ipairs(vim.api.nvim_list_wins()) do
    if vim.api.nvim_win_get_config(win).relative ~= '' then
      vim.api.nvim_win_close(win, true)
    end
  end
end

-- Hover at a 0-based line and byte column; nil when Neovim shows nothing.
local function hover_at(name, line, col)
  close_floats()
  vim.api.nvim_win_set_cursor(0, { line + 1, col })
  shown = nil
  vim.lsp.buf.hover()
  vim.wait(5000, function() return shown ~= nil end, 20)
  result.hovers[name] = shown or vim.NIL
end

-- The titles of the code actions the menu lists at a 0-based line.
local function titles_at(buf, line)
  vim.api.nvim_win_set_cursor(0, { line + 1, 0 })
  local params = vim.lsp.util.make_range_params(0, 'utf-16')
  params.context = { diagnostics = vim.lsp.diagnostic.from(vim.diagnostic.get(buf, { lnum = line })) }
  local answers = vim.lsp.buf_request_sync(buf, 'textDocument/codeAction', params, 10000) or {}
  local titles = {}
  for _, answer in pairs(answers) do
    for _, action in ipairs(answer.result or {}) do
      table.insert(titles, action.title)
    end
  end
  return titles
end

-- The run id of a ruff Error on a 0-based line, if one is there from a run
-- other than `before`.
local function ruff_error_at(buf, line, before)
  for _, d in ipairs(vim.diagnostic.get(buf, { lnum = line })) do
    local sent = d.user_data and d.user_data.lsp or {}
    local run = type(sent.data) == 'table' and sent.data.run_id or nil
    if d.source == 'ruff' and d.severity == vim.diagnostic.severity.ERROR and run ~= before then
      return run
    end
  end
end

-- The typo after unsaved edits, and across the save that runs ruff again.
local function after_edits(buf, typo)
  local first_run = ruff_error_at(buf, typo)
  vim.api.nvim_buf_set_lines(buf, 0, 0, false, { '# a line added above' })
  hover_at('moved_typo', typo + 1, tonumber(env.ACP_TYPO_COL))
  hover_at('old_place', typo, tonumber(env.ACP_TYPO_COL))
  local text = vim.api.nvim_buf_get_lines(buf, typo + 1, typo + 2, false)[1]
  vim.api.nvim_buf_set_lines(buf, typo + 1, typo + 2, false, { text .. '  # edited' })
  hover_at('edited_typo', typo + 1, tonumber(env.ACP_TYPO_COL))
  vim.cmd('write')
  -- Until the new run's Error is on the typo's new line (the old run's, moved
  -- there by the first edit, may still be shown until the server sends the
  -- file again), and once after: never the old run's finding one line off.
  result.after_save = {}
  local deadline = vim.uv.now() + 20000
  repeat
    hover_at('after_save', typo, tonumber(env.ACP_TYPO_COL))
    table.insert(result.after_save, result.hovers.after_save)
  until ruff_error_at(buf, typo + 1, first_run) or vim.uv.now() > deadline
  hover_at('after_save', typo, tonumber(env.ACP_TYPO_COL))
  table.insert(result.after_save, result.hovers.after_save)
  hover_at('new_run', typo + 1, tonumber(env.ACP_TYPO_COL))
end

local function run()
  vim.opt.runtimepath:append(env.ACP_NVIM_CONFIG_DIR)
  vim.lsp.enable('acp_lsp')
  vim.cmd('filetype on')
  vim.cmd('edit ' .. vim.fn.fnameescape(env.ACP_DEMO_FILE))
  local buf = vim.api.nvim_get_current_buf()
  if not attached(buf) then
    result.error = 'no initialized acp_lsp client attached to the buffer'
    return
  end
  vim.cmd('write') -- runOn = save: ruff runs
  vim.wait(20000, function()
    for _, d in ipairs(vim.diagnostic.get(buf)) do
      if d.severity == vim.diagnostic.severity.ERROR then return true end
    end
    return false
  end, 20)

  hover_at('typo', tonumber(env.ACP_TYPO_LINE), tonumber(env.ACP_TYPO_COL))
  result.typo_actions = titles_at(buf, tonumber(env.ACP_TYPO_LINE))
  hover_at('function', tonumber(env.ACP_FUNCTION_LINE), 4)

  close_floats()
  local symbols = nil
  vim.lsp.buf.workspace_symbol('ruff', { on_list = function(list) symbols = list.items end })
  vim.wait(5000, function() return symbols ~= nil end, 20)
  result.symbols = {}
  for _, item in ipairs(symbols or {}) do
    table.insert(result.symbols, { filename = item.filename, lnum = item.lnum, text = item.text })
  end

  hover_at('plain', 0, 0)
  vim.cmd('edit ' .. vim.fn.fnameescape(env.ACP_PLAN_FILE))
  local plan_buf = vim.api.nvim_get_current_buf()
  if attached(plan_buf) then
    hover_at('plan', tonumber(env.ACP_PLAN_LINE), 4)
    hover_at('import', tonumber(env.ACP_IMPORT_LINE), 7)
    result.import_actions = titles_at(plan_buf, tonumber(env.ACP_IMPORT_LINE))
  end
  vim.cmd('buffer ' .. buf)
  after_edits(buf, tonumber(env.ACP_TYPO_LINE))
end

local here = vim.fn.fnamemodify(debug.getinfo(1, 'S').source:sub(2), ':h')
dofile(here .. '/nvim_finish.lua')(run, result)
