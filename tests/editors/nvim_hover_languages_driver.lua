-- Drives a headless Neovim >= 0.11 with editors/neovim/lsp/acp_lsp.lua through
-- hover in a file that is not Python, as a user would: open $ACP_FILE, save it
-- (runOn = save: the validation $ACP_VALIDATION runs), wait for its diagnostic
-- on line $ACP_LINE, then `vim.lsp.buf.hover()` at that line and byte column
-- $ACP_COL (both 0-based). What Neovim shows goes to $ACP_RESULT_FILE as JSON:
-- the hover float's text, the buffer's diagnostics, its filetype and the
-- languageId the client announced it with.
local env = vim.env
local result = {}

-- Every hover float's lines, as Neovim renders them.
local shown = nil
local open_preview = vim.lsp.util.open_floating_preview
vim.lsp.util.open_floating_preview = function(contents, syntax, opts)
  shown = { syntax = syntax, text = table.concat(contents, '\n') }
  return open_preview(contents, syntax, opts)
end

local function acp_client(buf)
  local ok = vim.wait(10000, function()
    local clients = vim.lsp.get_clients({ bufnr = buf, name = 'acp_lsp' })
    return #clients > 0 and clients[1].initialized == true
  end, 20)
  return ok and vim.lsp.get_clients({ bufnr = buf, name = 'acp_lsp' })[1] or nil
end

local function close_floats()
  for _, win in ipairs(vim.api.nvim_list_wins()) do
    if vim.api.nvim_win_get_config(win).relative ~= '' then
      vim.api.nvim_win_close(win, true)
    end
  end
end

-- The validation's diagnostics on `line`, as vim.diagnostic holds them.
local function diagnostics_at(buf, line)
  local found = {}
  for _, d in ipairs(vim.diagnostic.get(buf, { lnum = line })) do
    if d.source == env.ACP_VALIDATION then
      table.insert(found, { col = d.col, message = d.message, code = d.code, severity = d.severity })
    end
  end
  return found
end

-- One hover at a 0-based line and byte column: the float, or nil when none
-- opened within 5 s.
local function hover_at(line, col)
  close_floats()
  vim.api.nvim_win_set_cursor(0, { line + 1, col })
  shown = nil
  vim.lsp.buf.hover()
  vim.wait(5000, function() return shown ~= nil end, 20)
  return shown
end

local function run()
  vim.opt.runtimepath:append(env.ACP_NVIM_CONFIG_DIR)
  vim.lsp.enable('acp_lsp')
  vim.cmd('filetype on')
  vim.cmd('edit ' .. vim.fn.fnameescape(env.ACP_FILE))
  local buf = vim.api.nvim_get_current_buf()
  result.filetype = vim.bo[buf].filetype
  local client = acp_client(buf)
  if not client then
    result.error = 'no initialized acp_lsp client attached to the ' .. result.filetype .. ' buffer'
    return
  end
  -- What the shipped config restricts (nothing: no `filetypes`), and the
  -- languageId textDocument/didOpen carried (by default: the filetype).
  result.config_filetypes = client.config.filetypes or vim.NIL
  result.language_id = client.get_language_id(buf, vim.bo[buf].filetype)

  local line, col = tonumber(env.ACP_LINE), tonumber(env.ACP_COL)
  vim.cmd('write')
  vim.wait(15000, function() return #diagnostics_at(buf, line) > 0 end, 20)
  result.diagnostics = diagnostics_at(buf, line)

  -- The diagnostic and the hover come from the same result; hover again only
  -- if the first answer did not hold the finding yet.
  local deadline = vim.uv.now() + 8000
  repeat
    result.hover = hover_at(line, col) or vim.NIL
    local text = result.hover ~= vim.NIL and result.hover.text or ''
  until text:find(env.ACP_MESSAGE, 1, true) or vim.uv.now() > deadline
end

local here = vim.fn.fnamemodify(debug.getinfo(1, 'S').source:sub(2), ':h')
dofile(here .. '/nvim_finish.lua')(run, result)
