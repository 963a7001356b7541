-- respgate_json, path.lua: legacy paths and JSONPath: compiler, filters, the walk that finds matches.
-- One part of one function library: library.ts joins the parts in order into the one text FUNCTION
-- LOAD takes, so each part sees the locals of the parts before it. Not loadable on its own.
---------------------------------------------------------------------------------------------------
-- Paths: legacy (`.a.b[0]`, `a`) and JSONPath (`$..a`, `$.b[*]`, `$[1:3]`, `$.x[?(@.p < 10)]`)

local function path_error(at, msg) err('Error occurred at position ' .. at .. ', ' .. msg) end

-- Legacy paths become JSONPath the way RedisJSON does it.
local function normalize_path(p)
  check_utf8(p)
  if p == '$' or p:sub(1, 2) == '$.' or p:sub(1, 2) == '$[' then return p, false end
  if p == '.' then return '$', true end
  if p:sub(1, 1) == '.' then return '$' .. p, true end
  return '$.' .. p, true
end

local NAME_CHARS = '[%w%-_`+#%%%$%^/:]'

local parse_filter_expr -- forward

-- Compiles a JSONPath into steps: {k='name',v=..} {k='index',list={..}} {k='names',list}
-- {k='all'} {k='scan'} {k='slice',s,e,step} {k='filter',expr}.
local function compile_path(p)
  local steps = {}
  local pos = 2
  local len = #p
  if p:sub(1, 1) ~= '$' then path_error(1, "expected root") end
  local function parse_bracket()
    -- p[pos] == '['
    pos = pos + 1
    local ws = p:match('^%s*', pos); pos = pos + #ws
    local c = p:sub(pos, pos)
    if c == '*' then
      pos = pos + 1
      ws = p:match('^%s*', pos); pos = pos + #ws
      if p:sub(pos, pos) ~= ']' then path_error(pos, "expected ']'") end
      pos = pos + 1
      return { k = 'all' }
    elseif c == '?' then
      pos = pos + 1
      local expr
      expr, pos = parse_filter_expr(p, pos)
      ws = p:match('^%s*', pos); pos = pos + #ws
      if p:sub(pos, pos) ~= ']' then path_error(pos, "expected ']'") end
      pos = pos + 1
      return { k = 'filter', expr = expr }
    elseif c == '"' or c == "'" then
      local list = {}
      while true do
        local q = p:sub(pos, pos)
        if q ~= '"' and q ~= "'" then path_error(pos, "expected '<string>[,<string>,...]'") end
        local buf = {}
        pos = pos + 1
        while true do
          local ch = p:sub(pos, pos)
          if ch == '' then path_error(pos, 'unterminated string') end
          if ch == '\\' then
            buf[#buf + 1] = p:sub(pos + 1, pos + 1); pos = pos + 2
          elseif ch == q then pos = pos + 1; break
          else buf[#buf + 1] = ch; pos = pos + 1 end
        end
        list[#list + 1] = table.concat(buf)
        ws = p:match('^%s*', pos); pos = pos + #ws
        if p:sub(pos, pos) == ',' then
          pos = pos + 1
          ws = p:match('^%s*', pos); pos = pos + #ws
        else break end
      end
      if p:sub(pos, pos) ~= ']' then path_error(pos, "expected ']'") end
      pos = pos + 1
      return { k = 'names', list = list }
    else
      -- numbers list or slice
      local function num()
        local n = p:match('^%-?%d+', pos)
        if n then pos = pos + #n; ws = p:match('^%s*', pos); pos = pos + #ws; return tonumber(n) end
        return nil
      end
      local first = num()
      if p:sub(pos, pos) == ':' then
        pos = pos + 1
        ws = p:match('^%s*', pos); pos = pos + #ws
        local last = num()
        local step
        if p:sub(pos, pos) == ':' then
          pos = pos + 1
          ws = p:match('^%s*', pos); pos = pos + #ws
          step = num()
          if step and step <= 0 then path_error(pos, "expected ['start:end:steps']") end
        end
        if p:sub(pos, pos) ~= ']' then path_error(pos, "expected ['start:end:steps']") end
        pos = pos + 1
        return { k = 'slice', s = first, e = last, step = step or 1 }
      end
      if not first then path_error(pos, "expected '<number>[,<number>,...]'") end
      local list = { first }
      while p:sub(pos, pos) == ',' do
        pos = pos + 1
        ws = p:match('^%s*', pos); pos = pos + #ws
        local n = num()
        if not n then path_error(pos, "expected '<number>'") end
        list[#list + 1] = n
      end
      if p:sub(pos, pos) ~= ']' then path_error(pos, "expected ']'") end
      pos = pos + 1
      return { k = 'index', list = list }
    end
  end
  while pos <= len do
    local c = p:sub(pos, pos)
    if c == '[' then
      steps[#steps + 1] = parse_bracket()
    elseif c == '.' then
      if p:sub(pos + 1, pos + 1) == '.' then
        steps[#steps + 1] = { k = 'scan' }
        pos = pos + 2
        local d = p:sub(pos, pos)
        if d == '[' then
          steps[#steps + 1] = parse_bracket()
        elseif d == '*' then
          steps[#steps + 1] = { k = 'all' }; pos = pos + 1
        else
          local name = p:match('^' .. NAME_CHARS .. '+', pos)
          if not name then path_error(pos, "expected <string>") end
          steps[#steps + 1] = { k = 'name', v = name }; pos = pos + #name
        end
      else
        pos = pos + 1
        local d = p:sub(pos, pos)
        if d == '*' then
          steps[#steps + 1] = { k = 'all' }; pos = pos + 1
        elseif d == '[' then
          steps[#steps + 1] = parse_bracket()
        else
          local name = p:match('^' .. NAME_CHARS .. '+', pos)
          if not name then path_error(pos, "expected <string>, '*', '..', '[' or '['") end
          steps[#steps + 1] = { k = 'name', v = name }; pos = pos + #name
        end
      end
    else
      path_error(pos, "expected '.', '..' or '['")
    end
  end
  return steps
end

-- A path is static when it names exactly one place (JSON.SET may create its last key).
local function is_static(steps)
  for _, s in ipairs(steps) do
    if s.k == 'name' then
    elseif (s.k == 'index' or s.k == 'names') and #s.list == 1 then
    else return false end
  end
  return true
end

-- Filter expressions: || && ! ( ) comparisons == != < <= > >= =~ on @/$ paths and literals.
local function filter_tokenizer(p, pos)
  local toks = {}
  local depth = 0
  local len = #p
  while true do
    local ws = p:match('^%s*', pos); pos = pos + #ws
    if pos > len then path_error(pos, "expected ']'") end
    local c = p:sub(pos, pos)
    local two = p:sub(pos, pos + 1)
    if c == ']' and depth == 0 then break end
    if c == '(' then depth = depth + 1; toks[#toks + 1] = { t = '(' }; pos = pos + 1
    elseif c == ')' then depth = depth - 1; toks[#toks + 1] = { t = ')' }; pos = pos + 1
    elseif two == '&&' or two == '||' or two == '==' or two == '!=' or two == '<=' or two == '>=' or two == '=~' then
      toks[#toks + 1] = { t = two }; pos = pos + 2
    elseif c == '<' or c == '>' or c == '!' then toks[#toks + 1] = { t = c }; pos = pos + 1
    elseif c == '@' or c == '$' then
      -- a relative or absolute path: up to a space, operator or closing bracket at depth 0
      local start = pos
      pos = pos + 1
      local bdepth = 0
      while pos <= len do
        local ch = p:sub(pos, pos)
        if ch == '[' then bdepth = bdepth + 1
        elseif ch == ']' then
          if bdepth == 0 then break end
          bdepth = bdepth - 1
        elseif bdepth == 0 and (ch:match('[%s()<>=!&|]')) then break end
        pos = pos + 1
      end
      local text = '$' .. p:sub(start + 1, pos - 1)
      toks[#toks + 1] = { t = 'path', rel = (c == '@'), steps = compile_path(text) }
    elseif c == '"' or c == "'" then
      local buf = {}
      pos = pos + 1
      while true do
        local ch = p:sub(pos, pos)
        if ch == '' then path_error(pos, 'unterminated string') end
        if ch == '\\' then buf[#buf + 1] = p:sub(pos + 1, pos + 1); pos = pos + 2
        elseif ch == c then pos = pos + 1; break
        else buf[#buf + 1] = ch; pos = pos + 1 end
      end
      toks[#toks + 1] = { t = 'lit', v = table.concat(buf) }
    elseif p:match('^%-?%d', pos) then
      local n = p:match('^%-?%d+%.?%d*[eE]?[-+]?%d*', pos)
      pos = pos + #n
      toks[#toks + 1] = { t = 'lit', v = decode(n) }
    elseif p:sub(pos, pos + 3) == 'true' then toks[#toks + 1] = { t = 'lit', v = true }; pos = pos + 4
    elseif p:sub(pos, pos + 4) == 'false' then toks[#toks + 1] = { t = 'lit', v = false }; pos = pos + 5
    elseif p:sub(pos, pos + 3) == 'null' then toks[#toks + 1] = { t = 'lit', v = NULL }; pos = pos + 4
    else
      path_error(pos, "expected '[?(filter_expression)]'")
    end
  end
  return toks, pos
end

parse_filter_expr = function(p, pos)
  local toks, endpos = filter_tokenizer(p, pos)
  local i = 1
  local function peek() return toks[i] and toks[i].t end
  local parse_or
  local function parse_atom()
    local t = toks[i]
    if not t then path_error(endpos, "expected '[?(filter_expression)]'") end
    if t.t == '(' then
      i = i + 1
      local e = parse_or()
      if peek() ~= ')' then path_error(endpos, "expected ')'") end
      i = i + 1
      return e
    elseif t.t == '!' then
      i = i + 1
      return { op = 'not', a = parse_atom() }
    elseif t.t == 'path' or t.t == 'lit' then
      i = i + 1
      local op = peek()
      if op == '==' or op == '!=' or op == '<' or op == '<=' or op == '>' or op == '>=' or op == '=~' then
        i = i + 1
        local r = toks[i]
        if not r or (r.t ~= 'path' and r.t ~= 'lit') then path_error(endpos, "expected a value") end
        i = i + 1
        return { op = op, a = t, b = r }
      end
      return { op = 'exists', a = t }
    end
    path_error(endpos, "expected '[?(filter_expression)]'")
  end
  local function parse_and()
    local e = parse_atom()
    while peek() == '&&' do i = i + 1; e = { op = 'and', a = e, b = parse_atom() } end
    return e
  end
  parse_or = function()
    local e = parse_and()
    while peek() == '||' do i = i + 1; e = { op = 'or', a = e, b = parse_and() } end
    return e
  end
  local e = parse_or()
  if i <= #toks then path_error(endpos, "expected '&&', '||' or ']'") end
  return e, endpos
end

local select_nodes -- forward

local function operand_values(t, node, root)
  if t.t == 'lit' then return { t.v } end
  local res = select_nodes(t.steps, t.rel and node or root)
  local vals = {}
  for _, r in ipairs(res) do vals[#vals + 1] = r.v end
  return vals
end

local function compare(op, a, b)
  if op == '==' then return equal(a, b) end
  if op == '!=' then return not equal(a, b) end
  if op == '=~' then
    if type(a) ~= 'string' or type(b) ~= 'string' then return false end
    local ok, found = pcall(string.find, a, b)
    return ok and found ~= nil
  end
  local x, y
  if type(a) == 'table' and a.num and type(b) == 'table' and b.num then x, y = a.f, b.f
  elseif type(a) == 'string' and type(b) == 'string' then x, y = a, b
  else return false end
  if op == '<' then return x < y elseif op == '<=' then return x <= y
  elseif op == '>' then return x > y else return x >= y end
end

local function eval_filter(e, node, root)
  if e.op == 'and' then return eval_filter(e.a, node, root) and eval_filter(e.b, node, root) end
  if e.op == 'or' then return eval_filter(e.a, node, root) or eval_filter(e.b, node, root) end
  if e.op == 'not' then return not eval_filter(e.a, node, root) end
  if e.op == 'exists' then
    if e.a.t == 'lit' then return e.a.v ~= false and e.a.v ~= NULL end
    return #operand_values(e.a, node, root) > 0
  end
  local as = operand_values(e.a, node, root)
  local bs = operand_values(e.b, node, root)
  for _, a in ipairs(as) do
    for _, b in ipairs(bs) do
      if compare(e.op, a, b) then return true end
    end
  end
  return false
end

-- Evaluates compiled steps; each match is {v=value, parent=container|nil, key=index|name|nil, path={...}}.
-- Paths of matches are kept as chains ({up = parent chain, k = key}) while walking, and made into
-- arrays only for the commands that need them (path_of), so walking a large document stays linear.
local function path_of(chain)
  local rev = {}
  while chain do rev[#rev + 1] = chain.k; chain = chain.up end
  local out = {}
  for i = #rev, 1, -1 do out[#out + 1] = rev[i] end
  return out
end

select_nodes = function(steps, root)
  local results = {}
  local walk
  local function child(si, nv, parent, k, chain)
    walk(si + 1, nv, parent, k, { up = chain, k = k })
  end
  -- Descendants before the node itself: the order the real service returns (see docs/json.md).
  local function scan(si, x, xparent, xkey, chain)
    if type(x) == 'table' and x ~= NULL then
      if x.obj then
        for _, k in ipairs(x.keys) do scan(si, x.map[k], x, k, { up = chain, k = k }) end
      elseif x.arr then
        for i = 1, x.n do scan(si, x[i], x, i, { up = chain, k = i }) end
      end
    end
    walk(si + 1, x, xparent, xkey, chain)
  end
  walk = function(si, v, parent, key, chain)
    local s = steps[si]
    if not s then
      results[#results + 1] = { v = v, parent = parent, key = key, chain = chain }
      return
    end
    local isobj = type(v) == 'table' and v.obj
    local isarr = type(v) == 'table' and v.arr
    local k = s.k
    if k == 'name' then
      if isobj and v.map[s.v] ~= nil then child(si, v.map[s.v], v, s.v, chain) end
    elseif k == 'names' then
      if isobj then for _, n in ipairs(s.list) do if v.map[n] ~= nil then child(si, v.map[n], v, n, chain) end end end
    elseif k == 'index' then
      if isarr then
        for _, i in ipairs(s.list) do
          local idx = i < 0 and v.n + i + 1 or i + 1
          if idx >= 1 and idx <= v.n then child(si, v[idx], v, idx, chain) end
        end
      end
    elseif k == 'all' then
      if isobj then for _, name in ipairs(v.keys) do child(si, v.map[name], v, name, chain) end
      elseif isarr then for i = 1, v.n do child(si, v[i], v, i, chain) end end
    elseif k == 'slice' then
      if isarr then
        local n = v.n
        local st = s.s or 0
        local en = s.e or n
        if st < 0 then st = math.max(n + st, 0) end
        if en < 0 then en = math.max(n + en, 0) end
        if en > n then en = n end
        local i = st
        while i < en do child(si, v[i + 1], v, i + 1, chain); i = i + s.step end
      end
    elseif k == 'filter' then
      if isobj then
        for _, name in ipairs(v.keys) do if eval_filter(s.expr, v.map[name], root) then child(si, v.map[name], v, name, chain) end end
      elseif isarr then
        for i = 1, v.n do if eval_filter(s.expr, v[i], root) then child(si, v[i], v, i, chain) end end
      end
    elseif k == 'scan' then
      scan(si, v, parent, key, chain)
    end
  end
  walk(1, root, nil, nil, nil)
  return results
end

