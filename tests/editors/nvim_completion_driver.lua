-- Drives a headless Neovim >= 0.11 through completion as a user would, with
-- Neovim's own machinery: vim.lsp.completion enabled on LspAttach with
-- autotrigger (`:help lsp-completion`), keys typed in insert mode, and the
-- menu Neovim fills (complete_info()) read back. $ACP_SCENARIO says which:
--   toml: in acp.toml, a new [[validations]] table and `preset = "`;
--   noqa: in $ACP_DEMO_FILE, save (ruff runs), type `  # noqa: ` after the
--         finding coded $ACP_CODE and take the first item, undo; then pick
--         "Suppress $ACP_CODE on this line (ruff)" from vim.lsp.buf.code_action,
--         undo it, redo it, save and wait for the next run.
-- Writes what Neovim holds to $ACP_RESULT_FILE as JSON.
local env = vim.env
local result = { steps = {}, progress = {} }

local function step(name)
  table.insert(result.steps, name)
end

-- The user's configuration: completion from the server, on its trigger characters.
vim.o.completeopt = 'menuone,noselect,popup'
vim.api.nvim_create_autocmd('LspAttach', {
  callback = function(args)
    local client = assert(vim.lsp.get_client_by_id(args.data.client_id))
    if client:supports_method('textDocument/completion') then
      vim.lsp.completion.enable(true, client.id, args.buf, { autotrigger = true })
    end
  end,
})

-- Work-done progress: a validation run ends with `end`.
local default_progress_handler = vim.lsp.handlers['$/progress']
vim.lsp.handlers['$/progress'] = function(err, params, ctx, config)
  if params and type(params.value) == 'table' then
    table.insert(result.progress, params.value.kind)
  end
  return default_progress_handler(err, params, ctx, config)
end

local function count(kind)
  local seen = 0
  for _, each in ipairs(result.progress) do
    if each == kind then
      seen = seen + 1
    end
  end
  return seen
end

local function line(buf, lnum)
  return vim.api.nvim_buf_get_lines(buf, lnum, lnum + 1, false)[1]
end

-- Type `keys` in insert mode ('tx!': as typed, and Neovim stays in insert
-- mode with its event loop running, so the server's answer reaches the menu);
-- once the menu holds items (or after 10 s), keep them, type what
-- `choose(items)` says (<C-n>s and <C-y> to take one) and leave insert mode.
-- Returns the menu's items as Neovim holds them.
local function complete_after_typing(keys, choose)
  local menu = nil
  local deadline = vim.uv.now() + 10000
  local timer = assert(vim.uv.new_timer())
  timer:start(20, 20, vim.schedule_wrap(function()
    if menu ~= nil then
      return
    end
    local info = vim.fn.complete_info({ 'items', 'pum_visible' })
    if #info.items > 0 or vim.uv.now() > deadline then
      timer:stop()
      timer:close()
      menu = info.items
      result.pum_visible = info.pum_visible == 1
      vim.api.nvim_feedkeys(vim.keycode(choose(menu) .. '<Esc>'), 'n', false)
    end
  end))
  vim.api.nvim_feedkeys(vim.keycode(keys), 'tx!', false)
  local items = {}
  for _, item in ipairs(menu or {}) do
    local lsp = vim.tbl_get(item, 'user_data', 'nvim', 'lsp') or {}
    table.insert(items, {
      word = item.word,
      abbr = item.abbr,
      kind = item.kind,
      menu = item.menu,
      info = item.info,
      client_id = lsp.client_id,
    })
  end
  return items
end

local function attach(buf)
  local attached = vim.wait(15000, function()
    local clients = vim.lsp.get_clients({ bufnr = buf })
    return #clients > 0 and clients[1].initialized == true
  end, 20)
  if attached then
    result.client_id = vim.lsp.get_clients({ bufnr = buf })[1].id
  end
  return attached
end

-- Until the server has the resource's acp.toml schema (listed after the
-- backend connects), completion answers null: ask, raw, at the end of the
-- existing `preset = "` until it answers, as a user who waits a moment would.
local function schema_ready(buf)
  local lines = vim.api.nvim_buf_get_lines(buf, 0, -1, false)
  local lnum = nil
  for i, text in ipairs(lines) do
    if text:find('^preset = "') then
      lnum = i - 1
      break
    end
  end
  if lnum == nil then
    return false
  end
  local params = {
    textDocument = vim.lsp.util.make_text_document_params(buf),
    position = { line = lnum, character = #'preset = "' },
  }
  local started = vim.uv.hrtime()
  local waited_ms = function() return (vim.uv.hrtime() - started) / 1e6 end
  result.null_answers = 0
  while waited_ms() < 10000 do
    local answers = vim.lsp.buf_request_sync(buf, 'textDocument/completion', params, 2000) or {}
    for _, answer in pairs(answers) do
      if answer.result ~= nil then
        result.ready_after_ms = math.floor(waited_ms())
        return true
      end
    end
    result.null_answers = result.null_answers + 1
    vim.wait(100)
  end
  return false
end

local function toml(buf)
  if not schema_ready(buf) then
    result.error = 'completion in acp.toml never answered'
    return
  end
  -- A new table at the end of the file, typed: Go<CR>[[validations]]<CR>preset = "
  -- and `ruff` taken from the menu.
  local last = vim.api.nvim_buf_line_count(buf)
  result.items = complete_after_typing('Go<CR>[[validations]]<CR>preset = "', function(items)
    for i, item in ipairs(items) do
      if item.abbr == 'ruff' then
        return string.rep('<C-n>', i) .. '<C-y>'
      end
    end
    return ''
  end)
  result.line = line(buf, last + 2)
  result.table_line = line(buf, last + 1)
  step('completed')
end

local function finding(buf, code)
  for _, d in ipairs(vim.diagnostic.get(buf)) do
    if d.source == 'ruff' and d.code == code then
      return d
    end
  end
end

local function ruff_codes(buf)
  local codes = {}
  for _, d in ipairs(vim.diagnostic.get(buf)) do
    if d.source == 'ruff' then
      table.insert(codes, { code = d.code, lnum = d.lnum })
    end
  end
  return codes
end

local function noqa(buf)
  local code = env.ACP_CODE
  vim.cmd('write') -- runOn = save: ruff runs
  if not vim.wait(20000, function() return finding(buf, code) ~= nil end, 20) then
    result.error = 'ruff never reported ' .. code
    return
  end
  local lnum = finding(buf, code).lnum
  result.lnum = lnum
  result.line_before = line(buf, lnum)
  result.codes_before = ruff_codes(buf)
  step('diagnostic')

  -- Typed after the finding's line; <C-n><C-y> takes the first item.
  vim.api.nvim_win_set_cursor(0, { lnum + 1, 0 })
  result.items = complete_after_typing('A  # noqa: ', function(items)
    return #items > 0 and '<C-n><C-y>' or ''
  end)
  result.line_completed = line(buf, lnum)
  vim.cmd('undo')
  result.line_after_completion_undo = line(buf, lnum)
  -- The typed comment changed the finding's line, so the server took the
  -- finding off it; the undo brings the line back as saved, and the
  -- finding with it, a publish later.
  if not vim.wait(10000, function() return finding(buf, code) ~= nil end, 20) then
    result.error = 'the finding did not come back after the undo'
    return
  end
  step('completed')

  -- The code actions on the line, then the suppression picked as a user would.
  vim.api.nvim_win_set_cursor(0, { lnum + 1, 0 })
  local params = vim.lsp.util.make_range_params(0, 'utf-16')
  params.context = { diagnostics = vim.lsp.diagnostic.from(vim.diagnostic.get(buf, { lnum = lnum })) }
  local answers = vim.lsp.buf_request_sync(buf, 'textDocument/codeAction', params, 10000) or {}
  result.titles = {}
  for _, answer in pairs(answers) do
    for _, action in ipairs(answer.result or {}) do
      table.insert(result.titles, action.title)
    end
  end
  local title = 'Suppress ' .. code .. ' on this line (ruff)'
  local tick = vim.api.nvim_buf_get_changedtick(buf)
  vim.lsp.buf.code_action({
    filter = function(action) return action.title == title end,
    apply = true,
  })
  if not vim.wait(10000, function() return vim.api.nvim_buf_get_changedtick(buf) ~= tick end, 20) then
    result.error = 'the suppression never changed the buffer'
    return
  end
  result.line_suppressed = line(buf, lnum)
  result.modified = vim.bo[buf].modified
  vim.cmd('undo')
  result.line_after_undo = line(buf, lnum)
  vim.cmd('redo')
  result.line_after_redo = line(buf, lnum)
  step('suppressed')

  -- The next run: ruff no longer reports it. The first run may still be
  -- ending; wait for one begun after this save, and for every run to end.
  local begun = count('begin')
  vim.cmd('write')
  result.cleared = vim.wait(20000, function()
    return count('begin') > begun
      and count('end') == count('begin')
      and finding(buf, code) == nil
      and #ruff_codes(buf) > 0
  end, 20)
  result.codes_after = ruff_codes(buf)
  step('cleared')
end

local function run()
  vim.opt.runtimepath:append(env.ACP_NVIM_CONFIG_DIR)
  vim.lsp.enable('acp_lsp')
  vim.cmd('filetype on')
  vim.cmd('edit ' .. vim.fn.fnameescape(env.ACP_DEMO_FILE))
  local buf = vim.api.nvim_get_current_buf()
  if not attach(buf) then
    result.error = 'no initialized acp_lsp client attached to the buffer'
    return
  end
  if env.ACP_SCENARIO == 'toml' then
    toml(buf)
  else
    noqa(buf)
  end
end

local here = vim.fn.fnamemodify(debug.getinfo(1, 'S').source:sub(2), ':h')
dofile(here .. '/nvim_finish.lua')(run, result)
