-- Drives a headless Neovim >= 0.11 with editors/neovim/lsp/acp_lsp.lua through
-- hover and workspace symbols, as a user would: open the demo file, save it,
-- wait for the ruff Error, then `vim.lsp.buf.hover()` on the typo and inside a
-- function, `vim.lsp.buf.workspace_symbol('ruff')`, and hover on the line a plan
-- changed in $ACP_PLAN_FILE. What Neovim shows goes to $ACP_RESULT_FILE as JSON.
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
  if attached(vim.api.nvim_get_current_buf()) then
    hover_at('plan', tonumber(env.ACP_PLAN_LINE), 4)
  end
end

local here = vim.fn.fnamemodify(debug.getinfo(1, 'S').source:sub(2), ':h')
dofile(here .. '/nvim_finish.lua')(run, result)
