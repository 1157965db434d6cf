-- The end every Neovim driver shares: run the scenario, keep its error in
-- the result instead of dying, write the result to $ACP_RESULT_FILE as JSON
-- and quit. vim.fn.json_encode: it exists on Neovim 0.7 as on 0.11.
return function(run, result)
  local ok, err = pcall(run)
  if not ok then
    result.error = tostring(err)
  end
  local out = assert(io.open(vim.env.ACP_RESULT_FILE, 'w'))
  out:write(vim.fn.json_encode(result))
  out:close()
  vim.cmd('qall!')
end
