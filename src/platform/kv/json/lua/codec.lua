-- respgate_json, codec.lua: JSON text to values and back (serde_json's grammar, errors, formats).
-- One part of one function library: library.ts joins the parts in order into the one text FUNCTION
-- LOAD takes, so each part sees the locals of the parts before it. Not loadable on its own.
---------------------------------------------------------------------------------------------------
-- JSON text → values (serde_json's grammar and error texts)

local function utf8_char(cp)
  if cp < 0x80 then return string.char(cp) end
  if cp < 0x800 then return string.char(0xC0 + math.floor(cp / 64), 0x80 + cp % 64) end
  if cp < 0x10000 then
    return string.char(0xE0 + math.floor(cp / 4096), 0x80 + math.floor(cp / 64) % 64, 0x80 + cp % 64)
  end
  return string.char(0xF0 + math.floor(cp / 262144), 0x80 + math.floor(cp / 4096) % 64,
    0x80 + math.floor(cp / 64) % 64, 0x80 + cp % 64)
end

local ESCAPES = { ['"'] = '"', ['\\'] = '\\', ['/'] = '/', b = '\b', f = '\f', n = '\n', r = '\r', t = '\t' }

-- `trusted`: text this library wrote itself (a stored document), whose numbers are already in
-- RedisJSON's form, so their text is kept as it is instead of being normalised again.
local function decode(text, trusted)
  local pos = 1
  local len = #text
  local function fail(msg, at)
    at = at or pos
    local line, col = 1, 0
    for i = 1, math.min(at, len) do
      if text:byte(i) == 10 then line = line + 1; col = 0 else col = col + 1 end
    end
    if at > len then col = col end
    err(msg .. ' at line ' .. line .. ' column ' .. col)
  end
  local function skip_ws()
    pos = text:find('[^ \t\r\n]', pos) or len + 1
  end
  local parse_value
  local function parse_string()
    pos = pos + 1 -- opening quote
    local parts = {}
    while true do
      local s, e = text:find('[%z\1-\31"\\]', pos)
      if not s then pos = len + 1; fail('EOF while parsing a string') end
      parts[#parts + 1] = text:sub(pos, s - 1)
      local c = text:sub(s, s)
      if c == '"' then pos = s + 1; break end
      if c ~= '\\' then pos = s; fail('control character (\\u0000-\\u001F) found while parsing a string', s) end
      local esc = text:sub(s + 1, s + 1)
      if esc == '' then pos = len + 1; fail('EOF while parsing a string') end
      if ESCAPES[esc] then
        parts[#parts + 1] = ESCAPES[esc]
        pos = s + 2
      elseif esc == 'u' then
        local hex = text:sub(s + 2, s + 5)
        if not hex:match('^%x%x%x%x$') then fail('invalid escape', s + 2) end
        local cp = tonumber(hex, 16)
        pos = s + 6
        if cp >= 0xD800 and cp <= 0xDBFF then
          local lo = text:match('^\\u(%x%x%x%x)', pos)
          local lcp = lo and tonumber(lo, 16)
          if not lcp or lcp < 0xDC00 or lcp > 0xDFFF then fail('lone leading surrogate in hex escape', pos - 1) end
          cp = 0x10000 + (cp - 0xD800) * 1024 + (lcp - 0xDC00)
          pos = pos + 6
        elseif cp >= 0xDC00 and cp <= 0xDFFF then
          fail('unexpected end of hex escape', pos - 1)
        end
        parts[#parts + 1] = utf8_char(cp)
      else
        fail('invalid escape', s + 1)
      end
    end
    return table.concat(parts)
  end
  local function parse_number()
    local start = pos
    local neg = false
    if text:sub(pos, pos) == '-' then neg = true; pos = pos + 1 end
    local intpart = text:match('^%d+', pos)
    if not intpart then fail('invalid number', pos) end
    if #intpart > 1 and intpart:sub(1, 1) == '0' then fail('invalid number', pos + 1) end
    pos = pos + #intpart
    local isfloat = false
    if text:sub(pos, pos) == '.' then
      local frac = text:match('^%d+', pos + 1)
      if not frac then pos = pos + 1; fail(pos > len and 'EOF while parsing a value' or 'invalid number') end
      pos = pos + 1 + #frac
      isfloat = true
    end
    local c = text:sub(pos, pos)
    if c == 'e' or c == 'E' then
      local exp = text:match('^[-+]?%d+', pos + 1)
      if not exp then pos = pos + 1; fail(pos > len and 'EOF while parsing a value' or 'invalid number') end
      pos = pos + 1 + #exp
      isfloat = true
    end
    if isfloat then
      local lit = text:sub(start, pos - 1)
      local f = tonumber(lit)
      if trusted then return { num = true, f = f, s = lit, int = false } end
      if f == math.huge or f == -math.huge then fail('number out of range', start) end
      return make_double(f)
    end
    if #intpart < 19 then -- within i64 for sure
      if intpart == '0' then return { num = true, s = '0', f = 0, int = true } end
      local lit = neg and ('-' .. intpart) or intpart
      return { num = true, s = lit, f = tonumber(lit), int = true }
    end
    return make_int_text(neg, intpart)
  end
  local function expect_word(word, value)
    if text:sub(pos, pos + #word - 1) == word then pos = pos + #word; return value end
    for i = 1, #word do
      local c = text:sub(pos + i - 1, pos + i - 1)
      if c == '' then pos = len + 1; fail('EOF while parsing a value') end
      if c ~= word:sub(i, i) then fail('expected ident', pos + i - 1) end
    end
  end
  parse_value = function(depth)
    skip_ws()
    if pos > len then fail('EOF while parsing a value') end
    local c = text:sub(pos, pos)
    if c == '{' then
      if depth >= MAX_DEPTH then fail('recursion limit exceeded') end
      pos = pos + 1
      local o = { obj = true, keys = {}, map = {} }
      skip_ws()
      if text:sub(pos, pos) == '}' then pos = pos + 1; return o end
      while true do
        skip_ws()
        if pos > len then fail('EOF while parsing an object') end
        if text:sub(pos, pos) ~= '"' then fail('key must be a string') end
        local k = parse_string()
        skip_ws()
        if pos > len then fail('EOF while parsing an object') end
        if text:sub(pos, pos) ~= ':' then fail('expected `:`') end
        pos = pos + 1
        local v = parse_value(depth + 1)
        if o.map[k] == nil then o.keys[#o.keys + 1] = k end
        o.map[k] = v
        skip_ws()
        local d = text:sub(pos, pos)
        if d == ',' then
          pos = pos + 1
          skip_ws()
          if text:sub(pos, pos) == '}' then fail('trailing comma') end
        elseif d == '}' then pos = pos + 1; return o
        elseif d == '' then fail('EOF while parsing an object')
        else fail('expected `,` or `}`') end
      end
    elseif c == '[' then
      if depth >= MAX_DEPTH then fail('recursion limit exceeded') end
      pos = pos + 1
      local a = { arr = true, n = 0 }
      skip_ws()
      if text:sub(pos, pos) == ']' then pos = pos + 1; return a end
      while true do
        local v = parse_value(depth + 1)
        a.n = a.n + 1
        a[a.n] = v
        skip_ws()
        local d = text:sub(pos, pos)
        if d == ',' then
          pos = pos + 1
          skip_ws()
          if text:sub(pos, pos) == ']' then fail('trailing comma') end
        elseif d == ']' then pos = pos + 1; return a
        elseif d == '' then fail('EOF while parsing a list')
        else fail('expected `,` or `]`') end
      end
    elseif c == '"' then return parse_string()
    elseif c == 't' then return expect_word('true', true)
    elseif c == 'f' then return expect_word('false', false)
    elseif c == 'n' then return expect_word('null', NULL)
    elseif c == '-' or c:match('%d') then return parse_number()
    end
    fail('expected value')
  end
  local v = parse_value(0)
  skip_ws()
  if pos <= len then fail('trailing characters') end
  return v
end

---------------------------------------------------------------------------------------------------
-- Values → JSON text (serde_json's compact form, or RedisJSON's INDENT/NEWLINE/SPACE formatter)

local function escape_char(c)
  if c == '"' then return '\\"' elseif c == '\\' then return '\\\\'
  elseif c == '\n' then return '\\n' elseif c == '\r' then return '\\r' elseif c == '\t' then return '\\t'
  elseif c == '\b' then return '\\b' elseif c == '\f' then return '\\f' end
  return string.format('\\u%04x', c:byte())
end

local function escape_string(s)
  if not s:find('[%z\1-\31"\\]') then return '"' .. s .. '"' end
  return '"' .. s:gsub('[%z\1-\31"\\]', escape_char) .. '"'
end

-- Compact JSON (serde_json's form): the common case, kept free of formatting work.
local function encode_plain(v)
  local out, n = {}, 0
  local function put(x)
    local t = type(x)
    if t == 'string' then n = n + 1; out[n] = escape_string(x)
    elseif t == 'boolean' then n = n + 1; out[n] = x and 'true' or 'false'
    elseif x == NULL then n = n + 1; out[n] = 'null'
    elseif x.num then n = n + 1; out[n] = x.s
    elseif x.arr then
      n = n + 1; out[n] = '['
      for i = 1, x.n do
        if i > 1 then n = n + 1; out[n] = ',' end
        put(x[i])
      end
      n = n + 1; out[n] = ']'
    else
      n = n + 1; out[n] = '{'
      local map = x.map
      for i, k in ipairs(x.keys) do
        n = n + 1; out[n] = (i > 1 and ',' or '') .. escape_string(k) .. ':'
        put(map[k])
      end
      n = n + 1; out[n] = '}'
    end
  end
  put(v)
  return table.concat(out)
end

local function encode(v, fmt)
  local indent, newline, space = '', '', ''
  if fmt then indent = fmt.indent or ''; newline = fmt.newline or ''; space = fmt.space or '' end
  if indent == '' and newline == '' and space == '' then return encode_plain(v) end
  local out = {}
  local function nl(depth)
    out[#out + 1] = newline .. string.rep(indent, depth)
  end
  local function put(x, depth)
    local t = type(x)
    if x == NULL then out[#out + 1] = 'null'
    elseif t == 'boolean' then out[#out + 1] = x and 'true' or 'false'
    elseif t == 'string' then out[#out + 1] = escape_string(x)
    elseif x.num then out[#out + 1] = x.s
    elseif x.arr then
      out[#out + 1] = '['
      for i = 1, x.n do
        if i > 1 then out[#out + 1] = ',' end
        nl(depth + 1)
        put(x[i], depth + 1)
      end
      if x.n > 0 then nl(depth) end
      out[#out + 1] = ']'
    else
      out[#out + 1] = '{'
      for i, k in ipairs(x.keys) do
        if i > 1 then out[#out + 1] = ',' end
        nl(depth + 1)
        out[#out + 1] = escape_string(k)
        out[#out + 1] = ':' .. space
        put(x.map[k], depth + 1)
      end
      if #x.keys > 0 then nl(depth) end
      out[#out + 1] = '}'
    end
  end
  put(v, 0)
  return table.concat(out)
end

local function type_name(v)
  if v == NULL then return 'null' end
  local t = type(v)
  if t == 'boolean' then return 'boolean' end
  if t == 'string' then return 'string' end
  if v.num then return v.int and 'integer' or 'number' end
  if v.arr then return 'array' end
  return 'object'
end

local function deep_copy(v)
  if type(v) ~= 'table' or v == NULL or v.num then return v end
  if v.arr then
    local a = { arr = true, n = v.n }
    for i = 1, v.n do a[i] = deep_copy(v[i]) end
    return a
  end
  local o = { obj = true, keys = {}, map = {} }
  for i, k in ipairs(v.keys) do o.keys[i] = k; o.map[k] = deep_copy(v.map[k]) end
  return o
end

local function equal(a, b)
  if a == b then return true end
  if type(a) ~= 'table' or type(b) ~= 'table' or a == NULL or b == NULL then return false end
  if a.num and b.num then return a.f == b.f and (a.int == b.int or a.f == b.f) end
  if a.arr and b.arr then
    if a.n ~= b.n then return false end
    for i = 1, a.n do if not equal(a[i], b[i]) then return false end end
    return true
  end
  if a.obj and b.obj then
    if #a.keys ~= #b.keys then return false end
    for _, k in ipairs(a.keys) do
      if b.map[k] == nil or not equal(a.map[k], b.map[k]) then return false end
    end
    return true
  end
  return false
end

