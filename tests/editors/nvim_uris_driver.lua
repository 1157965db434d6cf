-- Opens many files at once in a headless Neovim 0.11 with the shipped
-- lsp/acp_lsp.lua, saves one (runOn = save runs the project's validation,
-- which reports one finding in every file), and records, for every buffer,
-- the URI Neovim gave it and the diagnostics Neovim shows there. A
-- diagnostic published under another spelling of a file's URI shows in no
-- buffer. The files come one per line in $ACP_FILES.
local env = vim.env
local result = { buffers = {} }

local function run()
  vim.opt.runtimepath:append(env.ACP_NVIM_CONFIG_DIR)
  vim.lsp.enable('acp_lsp')
  vim.cmd('filetype on')
  local buffers = {}
  for path in env.ACP_FILES:gmatch('[^\n]+') do
    vim.cmd('edit ' .. vim.fn.fnameescape(path))
    table.insert(buffers, vim.api.nvim_get_current_buf())
  end
  local attached = vim.wait(15000, function()
    for _, buf in ipairs(buffers) do
      local clients = vim.lsp.get_clients({ bufnr = buf })
      if #clients == 0 or not clients[1].initialized then
        return false
      end
    end
    return true
  end, 20)
  if not attached then
    result.error = 'the client did not attach to every buffer'
    return
  end
  result.clients = #vim.lsp.get_clients()
  vim.cmd('write')
  vim.wait(20000, function()
    for _, buf in ipairs(buffers) do
      if #vim.diagnostic.get(buf) == 0 then
        return false
      end
    end
    return true
  end, 20)
  for _, buf in ipairs(buffers) do
    local messages = {}
    for _, d in ipairs(vim.diagnostic.get(buf)) do
      table.insert(messages, d.message)
    end
    table.insert(result.buffers, {
      name = vim.api.nvim_buf_get_name(buf),
      uri = vim.uri_from_bufnr(buf),
      messages = messages,
    })
  end
end

local here = vim.fn.fnamemodify(debug.getinfo(1, 'S').source:sub(2), ':h')
dofile(here .. '/nvim_finish.lua')(run, result)
