-- Drives a headless Neovim >= 0.11 with editors/neovim/lsp/acp_lsp.lua through
-- one of three workflows of issue 26 on $ACP_DEMO_FILE (inventory.py), as a
-- user lives them, chosen by $ACP_SCENARIO:
--
-- fix    (item 2) save, wait for ruff's unused import, make unsaved edits
--        elsewhere that move its line, list the code actions at its new line,
--        pick "Fix with ruff", undo it, then change the import's own line and
--        list the code actions there again.
-- plans  (item 3) list the code actions while the plans made before Neovim
--        opened fit the file, after an edit is saved (they no longer fit),
--        and after a new plan is made on the saved text ($ACP_PLAN_DIFF,
--        through the acp-backend command line).
-- apply  (item 4) pick "Apply plan" for the plan $ACP_PLAN_ID, read its state
--        from the backend, undo, read it again, apply again, save, read it.
--
-- What Neovim holds and what the backend says go to $ACP_RESULT_FILE as JSON;
-- the test asserts them. A wait that times out is recorded, not fatal, where
-- the test can say more about what was there instead.
local env = vim.env
local result = { scenario = env.ACP_SCENARIO, steps = {} }

local function step(name)
  table.insert(result.steps, name)
end

local function fail(message)
  error(message, 0)
end

local function lines(buf)
  return vim.api.nvim_buf_get_lines(buf, 0, -1, false)
end

local function start()
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
    fail('no initialized acp_lsp client attached to the buffer')
  end
  step('attached')
  return buf
end

-- The code actions the menu lists at a 0-based line (title, and the reason
-- when disabled), asked with the diagnostics Neovim shows on that line as
-- vim.lsp.buf.code_action sends them; and those diagnostics' messages.
local function actions_at(buf, line)
  vim.api.nvim_win_set_cursor(0, { line + 1, 0 })
  local params = vim.lsp.util.make_range_params(0, 'utf-16')
  local here = vim.diagnostic.get(buf, { lnum = line })
  params.context = { diagnostics = vim.lsp.diagnostic.from(here) }
  local answers = vim.lsp.buf_request_sync(buf, 'textDocument/codeAction', params, 10000) or {}
  local listed = {}
  for _, answer in pairs(answers) do
    for _, action in ipairs(answer.result or {}) do
      table.insert(listed, {
        title = action.title,
        disabled = action.disabled and action.disabled.reason or nil,
      })
    end
  end
  local sent = {}
  for _, d in ipairs(here) do
    table.insert(sent, d.message)
  end
  return listed, sent
end

local function titles(listed)
  local found = {}
  for _, action in ipairs(listed) do
    table.insert(found, action.title)
  end
  return found
end

-- What Neovim tells the user (vim.notify), e.g. "No code actions available".
local notified = {}
local notify = vim.notify
vim.notify = function(message, level, opts)
  table.insert(notified, tostring(message))
  return notify(message, level, opts)
end

-- Pick the one code action titled `title` at a 0-based line, as a user does
-- from vim.lsp.buf.code_action's menu (filter + apply: no menu for one
-- match), and wait for the buffer to change, or for Neovim to say there is
-- no such action. Whether the buffer changed.
local function pick(buf, line, title)
  vim.api.nvim_win_set_cursor(0, { line + 1, 0 })
  local tick = vim.api.nvim_buf_get_changedtick(buf)
  local told = #notified
  vim.lsp.buf.code_action({
    filter = function(action) return action.title == title end,
    apply = true,
  })
  local function none()
    for i = told + 1, #notified do
      if notified[i]:find('No code actions available', 1, true) then
        return true
      end
    end
    return false
  end
  vim.wait(10000, function() return vim.api.nvim_buf_get_changedtick(buf) ~= tick or none() end, 20)
  return vim.api.nvim_buf_get_changedtick(buf) ~= tick
end

-- A new undo block starts here (`:h undo-break`): an undo after it takes
-- back only what follows.
local function break_undo()
  vim.o.undolevels = vim.o.undolevels
end

-- The plan's state as the backend's command line reports it (nil if it fails).
local function plan_state(id)
  local out = vim.fn.system({ 'acp-backend', '--data-dir', env.ACP_DATA_DIR, 'plan', 'show', id, '--json' })
  if vim.v.shell_error ~= 0 then
    return nil
  end
  local ok, plan = pcall(vim.json.decode, out)
  return ok and type(plan) == 'table' and plan.state or nil
end

-- States a plan never leaves.
local ENDED = { applied = true, cancelled = true, errored = true }

-- Poll the plan's state until it is `want`, or one it never leaves
-- (bounded); whether it is `want`, and every state seen, in order.
local function wait_state(id, want, ms)
  local seen = {}
  vim.wait(ms, function()
    local state = plan_state(id) or 'unknown'
    if seen[#seen] ~= state then
      table.insert(seen, state)
    end
    return state == want or ENDED[state] ~= nil
  end, 100)
  return seen[#seen] == want, seen
end

-- --- fix (item 2) -----------------------------------------------------------

-- How many of the server's progress reports (a run each) have ended.
local runs_ended = 0
vim.api.nvim_create_autocmd('LspProgress', {
  callback = function(ev)
    local value = ev.data and ev.data.params and ev.data.params.value
    if type(value) == 'table' and value.kind == 'end' then
      runs_ended = runs_ended + 1
    end
  end,
})

local FIX = 'Fix with ruff: Remove unused import: `os`'

local function unused_import(buf)
  for _, d in ipairs(vim.diagnostic.get(buf)) do
    if d.source == 'ruff' and d.message:find('imported but unused') then
      return d
    end
  end
end

local function fix_scenario()
  local buf = start()
  -- Whether Neovim can show a disabled code action (0.11 cannot).
  result.disabled_support =
    vim.lsp.protocol.make_client_capabilities().textDocument.codeAction.disabledSupport == true
  vim.cmd('write')
  if not vim.wait(20000, function() return unused_import(buf) ~= nil end, 20) then
    fail("ruff's unused-import Error never showed")
  end
  -- The edits come once the save's run is over: it is the edit, not the run's
  -- last publish, that must move the finding on the screen.
  result.run_ended = vim.wait(20000, function() return runs_ended > 0 end, 20)
  local import = unused_import(buf).lnum
  result.import_line = import
  result.import_text = lines(buf)[import + 1]
  result.saved = lines(buf)
  step('diagnostic')

  -- Unsaved edits on other lines: one appended at the end, one inserted above
  -- the import (which moves down by one).
  break_undo()
  vim.api.nvim_buf_set_lines(buf, -1, -1, false, { '# an unsaved line at the end' })
  vim.api.nvim_buf_set_lines(buf, import, import, false, { '# an unsaved comment above the import' })
  local moved = import + 1
  result.moved_line = moved
  result.moved_text = lines(buf)[moved + 1]
  result.edited = lines(buf)
  result.modified_before_fix = vim.bo[buf].modified
  -- Neovim shows the finding on its new line (the server places it there).
  result.diagnostic_moved = vim.wait(5000, function()
    local d = unused_import(buf)
    return d ~= nil and d.lnum == moved
  end, 20)
  result.moved_actions, result.moved_diagnostics = actions_at(buf, moved)
  step('moved')

  break_undo()
  result.fix_applied = pick(buf, moved, FIX)
  result.after_fix = lines(buf)
  step('fixed')

  vim.cmd('undo')
  result.after_undo = lines(buf)
  step('undone')

  -- Now the import's own line changes (unsaved): the fix no longer fits it.
  local text = lines(buf)[moved + 1]
  vim.api.nvim_buf_set_lines(buf, moved, moved + 1, false, { text .. '  # changed, not saved' })
  result.changed_text = lines(buf)[moved + 1]
  -- (Neovim sends the change before the request, and the server takes them in order.)
  result.changed_actions, result.changed_diagnostics = actions_at(buf, moved)
  local tick = vim.api.nvim_buf_get_changedtick(buf)
  result.changed_picked = pick(buf, moved, FIX)
  result.changed_unchanged = vim.api.nvim_buf_get_changedtick(buf) == tick
  step('changed')
end

-- --- plans (item 3) ---------------------------------------------------------

local function count(listed, prefix)
  local found = 0
  for _, action in ipairs(listed) do
    if vim.startswith(action.title, prefix) then
      found = found + 1
    end
  end
  return found
end

local function plans_scenario()
  local buf = start()
  local line, plans = tonumber(env.ACP_PLAN_LINE), tonumber(env.ACP_PLAN_COUNT)
  local listed
  -- Every plan made before Neovim opened is offered for preview, once the
  -- session has read the plans.
  result.fitting_waited = vim.wait(8000, function()
    listed = actions_at(buf, line)
    return count(listed, 'Preview ') == plans
  end, 100)
  result.fitting = titles(listed)
  step('fitting')

  -- An edit, saved: every one of them was made on the text before it.
  vim.api.nvim_buf_set_lines(buf, -1, -1, false, { '# saved after the plans were made' })
  vim.cmd('write')
  result.stale_waited = vim.wait(8000, function()
    listed = actions_at(buf, line)
    return count(listed, 'Preview ') + count(listed, 'Apply ') == 0
  end, 100)
  result.stale = titles(listed)
  step('stale')
  if not result.stale_waited then
    return -- the test says what was offered instead
  end

  -- A plan made now, on the saved text (through the command line, as an
  -- agent would while the editor is open): it fits.
  local out = vim.fn.system({
    'acp-backend', '--data-dir', env.ACP_DATA_DIR, 'plan', 'create', 'demo',
    '--diff', env.ACP_PLAN_DIFF, '--title', env.ACP_PLAN_TITLE,
  })
  local id = out:match('^plan (%w+):')
  if vim.v.shell_error ~= 0 or not id then
    fail('acp-backend plan create failed: ' .. out)
  end
  result.new_id = id
  result.new_waited = vim.wait(8000, function()
    listed = actions_at(buf, line)
    return count(listed, 'Apply ') > 0
  end, 100)
  result.with_new = titles(listed)
  step('new')
end

-- --- apply (item 4) ---------------------------------------------------------

local function apply_title(listed)
  local found
  for _, action in ipairs(listed) do
    if vim.startswith(action.title, 'Apply plan “' .. env.ACP_PLAN_TITLE .. '”') then
      found = action.title
    end
  end
  return found
end

local function apply_scenario()
  local buf = start()
  local id, line = env.ACP_PLAN_ID, tonumber(env.ACP_PLAN_LINE)
  result.base = lines(buf)
  result.states = { before = plan_state(id) }

  local function apply_once(name)
    local listed, title
    vim.wait(10000, function()
      listed = actions_at(buf, line)
      title = apply_title(listed)
      return title ~= nil
    end, 100)
    result[name .. '_offered'] = titles(listed)
    if not title then
      fail('"Apply plan" was not offered (' .. name .. ')')
    end
    result[name .. '_title'] = title
    break_undo()
    if not pick(buf, line, title) then
      fail('"' .. title .. '" never changed the buffer (' .. name .. ')')
    end
    result[name .. '_buffer'] = lines(buf)
    result[name .. '_modified'] = vim.bo[buf].modified
  end

  apply_once('first')
  step('applied in the buffer')
  -- Nothing is on disk yet: the backend holds the plan as in the editor.
  result.in_editor_reached, result.states.after_apply = wait_state(id, 'in_editor', 10000)
  result.disk_after_apply = table.concat(vim.fn.readfile(env.ACP_DEMO_FILE), '\n')
  if not result.in_editor_reached then
    return -- the test says which state it was in instead
  end

  vim.cmd('undo')
  result.after_undo = lines(buf)
  result.modified_after_undo = vim.bo[buf].modified
  step('undone')
  -- The buffer holds the base again: the plan is back to complete.
  result.complete_reached, result.states.after_undo = wait_state(id, 'complete', 10000)
  if not result.complete_reached then
    return
  end

  apply_once('second')
  step('applied again')
  result.in_editor_again, result.states.after_second_apply = wait_state(id, 'in_editor', 10000)
  vim.cmd('write')
  step('saved')
  result.applied_reached, result.states.after_save = wait_state(id, 'applied', 10000)
  result.disk_after_save = table.concat(vim.fn.readfile(env.ACP_DEMO_FILE), '\n')
end

local scenarios = { fix = fix_scenario, plans = plans_scenario, apply = apply_scenario }

local function run()
  local scenario = scenarios[env.ACP_SCENARIO]
  if not scenario then
    fail('unknown $ACP_SCENARIO: ' .. tostring(env.ACP_SCENARIO))
  end
  local ok, err = pcall(scenario)
  result.messages = vim.fn.execute('messages')
  if not ok then
    error(err, 0)
  end
end

local here = vim.fn.fnamemodify(debug.getinfo(1, 'S').source:sub(2), ':h')
dofile(here .. '/nvim_finish.lua')(run, result)
