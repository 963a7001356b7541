#!lua name=respgate_json
-- The JSON command group (RedisJSON's JSON.*) as a Redis 7 function library, so every command runs
-- atomically inside redis-server like a module command would. Documents are stored as Redis strings:
-- MAGIC .. compact JSON text. The platform rewrites JSON.* commands to FCALL/FCALL_RO of these
-- functions (src/platform/kv/json/rewrite.ts). Own JSON codec: cjson loses integers past 2^53 and
-- cannot tell [] from {}.

local MAGIC = '\0respgate:json:1\0'
local MAGIC_LEN = #MAGIC
local NULL = { null = true }
local MAX_DEPTH = 128

-- Values: NULL, true/false, Lua strings, numbers {num=true, s=text, f=double, int=bool},
-- arrays {arr=true, n=count, [1..n]}, objects {obj=true, keys={...}, map={...}}.

local function err(msg) error({ rgjson = msg }, 0) end

-- RedisJSON reads paths and JSON values as Rust strings: invalid UTF-8 is refused before parsing.
local function check_utf8(s)
  if not s:find('[\128-\255]') then return end
  local i, n = 1, #s
  while i <= n do
    local c = s:byte(i)
    local len = c < 0x80 and 1 or (c >= 0xC2 and c <= 0xDF) and 2 or (c >= 0xE0 and c <= 0xEF) and 3 or (c >= 0xF0 and c <= 0xF4) and 4 or 0
    if len == 0 then err("Couldn't parse as UTF-8 string") end
    for j = i + 1, i + len - 1 do
      local cc = s:byte(j)
      if not cc or cc < 0x80 or cc > 0xBF then err("Couldn't parse as UTF-8 string") end
    end
    if len == 3 then
      local c2 = s:byte(i + 1)
      if (c == 0xE0 and c2 < 0xA0) or (c == 0xED and c2 > 0x9F) then err("Couldn't parse as UTF-8 string") end
    elseif len == 4 then
      local c2 = s:byte(i + 1)
      if (c == 0xF0 and c2 < 0x90) or (c == 0xF4 and c2 > 0x8F) then err("Couldn't parse as UTF-8 string") end
    end
    i = i + len
  end
end


---------------------------------------------------------------------------------------------------
-- Numbers

local I64_MAX = '9223372036854775807'
local I64_MIN_MAG = '9223372036854775808'
local U64_MAX = '18446744073709551615'

local function mag_cmp(a, b) -- magnitudes as digit strings without leading zeros
  if #a ~= #b then return #a < #b and -1 or 1 end
  if a == b then return 0 end
  return a < b and -1 or 1
end

local function fmt_double(x)
  if x ~= x or x == math.huge or x == -math.huge then err('ERR result is not a number') end
  if x == 0 then return (1 / x < 0) and '-0.0' or '0.0' end
  local sign = ''
  if x < 0 then sign = '-'; x = -x end
  -- The shortest round-trip digits: the closest 15-, 16- or 17-digit decimal (if any n-digit decimal
  -- round-trips, the closest one does).
  local s
  for p = 14, 16 do
    s = string.format('%.' .. p .. 'e', x)
    if p == 16 or tonumber(s) == x then break end
  end
  local mant, e = s:match('^([%d%.]+)e([-+]%d+)$')
  local digits = mant:gsub('%.', ''):gsub('0+$', '')
  if digits == '' then digits = '0' end
  local L = #digits
  local kk = tonumber(e) + 1
  local k = kk - L
  local out
  if k >= 0 and kk <= 16 then
    out = digits .. string.rep('0', k) .. '.0'
  elseif kk > 0 and kk <= 16 then
    out = digits:sub(1, kk) .. '.' .. digits:sub(kk + 1)
  elseif kk > -5 and kk <= 0 then
    out = '0.' .. string.rep('0', -kk) .. digits
  elseif L == 1 then
    out = digits .. 'e' .. (kk - 1)
  else
    out = digits:sub(1, 1) .. '.' .. digits:sub(2) .. 'e' .. (kk - 1)
  end
  return sign .. out
end

local function make_double(f) return { num = true, f = f, s = fmt_double(f), int = false } end

-- An integer literal: i64 or u64 stay exact; larger ones become doubles, as in RedisJSON.
local function make_int_text(neg, mag)
  mag = mag:gsub('^0+', '')
  if mag == '' then return { num = true, s = '0', f = 0, int = true } end
  if (not neg and mag_cmp(mag, U64_MAX) <= 0) or (neg and mag_cmp(mag, I64_MIN_MAG) <= 0) then
    local s = (neg and '-' or '') .. mag
    return { num = true, s = s, f = tonumber(s), int = true, u64 = (not neg and mag_cmp(mag, I64_MAX) > 0) }
  end
  return make_double(tonumber((neg and '-' or '') .. mag))
end

-- Exact decimal arithmetic on i64 values (Lua numbers are doubles).
local function split_sign(s)
  if s:sub(1, 1) == '-' then return true, s:sub(2) end
  return false, s
end
local function mag_add(a, b)
  local out, carry, i, j = {}, 0, #a, #b
  while i > 0 or j > 0 or carry > 0 do
    local d = carry + (i > 0 and a:byte(i) - 48 or 0) + (j > 0 and b:byte(j) - 48 or 0)
    out[#out + 1] = d % 10
    carry = math.floor(d / 10)
    i = i - 1; j = j - 1
  end
  local r = {}
  for n = #out, 1, -1 do r[#r + 1] = out[n] end
  return (table.concat(r):gsub('^0+', ''))
end
local function mag_sub(a, b) -- a >= b
  local out, borrow, i, j = {}, 0, #a, #b
  while i > 0 do
    local d = (a:byte(i) - 48) - borrow - (j > 0 and b:byte(j) - 48 or 0)
    if d < 0 then d = d + 10; borrow = 1 else borrow = 0 end
    out[#out + 1] = d
    i = i - 1; j = j - 1
  end
  local r = {}
  for n = #out, 1, -1 do r[#r + 1] = out[n] end
  return (table.concat(r):gsub('^0+', ''))
end
local function mag_mul(a, b)
  local res = {}
  for i = 1, #a + #b do res[i] = 0 end
  for i = #a, 1, -1 do
    local da = a:byte(i) - 48
    for j = #b, 1, -1 do
      local p = i + j
      res[p] = res[p] + da * (b:byte(j) - 48)
    end
  end
  for p = #res, 2, -1 do
    local c = math.floor(res[p] / 10)
    res[p] = res[p] % 10
    res[p - 1] = res[p - 1] + c
  end
  return (table.concat(res):gsub('^0+', ''))
end
local function int_result(neg, mag)
  if mag == '' then return '0' end
  if (not neg and mag_cmp(mag, I64_MAX) > 0) or (neg and mag_cmp(mag, I64_MIN_MAG) > 0) then
    err('ERR numeric overflow')
  end
  return (neg and '-' or '') .. mag
end
local function int_add(a, b)
  local na, ma = split_sign(a)
  local nb, mb = split_sign(b)
  if na == nb then return int_result(na, mag_add(ma, mb)) end
  local c = mag_cmp(ma, mb)
  if c == 0 then return '0' end
  if c > 0 then return int_result(na, mag_sub(ma, mb)) end
  return int_result(nb, mag_sub(mb, ma))
end
local function int_mul(a, b)
  local na, ma = split_sign(a)
  local nb, mb = split_sign(b)
  return int_result(na ~= nb, mag_mul(ma, mb))
end

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

---------------------------------------------------------------------------------------------------
-- Documents in keys

-- Decoded documents of recent commands, keyed by Redis key, each with the exact stored text it was
-- decoded from: a command reuses the tree only when the key still holds that text (string equality),
-- so changes by any other command are seen. Write commands change the tree and store it (the entry
-- follows); a command that fails may have changed a tree without storing it, so dispatch() empties the
-- cache on every error. Bounded in entries and document size.
local cache, cache_count = {}, 0
-- Small bounds: Redis runs a full Lua GC every 50 calls, which walks every cached tree.
local CACHE_MAX_ENTRIES, CACHE_MAX_BYTES = 16, 256 * 1024

local function cache_put(key, raw, doc)
  if #raw > CACHE_MAX_BYTES then cache[key] = nil; return end
  if cache[key] == nil then
    if cache_count >= CACHE_MAX_ENTRIES then cache = {}; cache_count = 0 end
    cache_count = cache_count + 1
  end
  cache[key] = { raw = raw, doc = doc }
end

local function clear_cache() cache = {}; cache_count = 0 end

local function delete_doc(key)
  redis.call('DEL', key)
  if cache[key] ~= nil then cache[key] = nil; cache_count = cache_count - 1 end
end

-- The stored text of a document (marker included), nil for a missing key, WRONGTYPE for other values.
local function load_raw(key)
  local t = redis.call('TYPE', key)['ok']
  if t == 'none' then return nil end
  if t ~= 'string' then err('WRONGTYPE Operation against a key holding the wrong kind of value') end
  local raw = redis.call('GET', key)
  if raw:sub(1, MAGIC_LEN) ~= MAGIC then err('WRONGTYPE Operation against a key holding the wrong kind of value') end
  return raw
end

local function load_doc(key)
  local raw = load_raw(key)
  if raw == nil then return nil end
  local hit = cache[key]
  if hit and hit.raw == raw then return hit.doc end
  local doc = decode(raw:sub(MAGIC_LEN + 1), true)
  cache_put(key, raw, doc)
  return doc
end

local function store_doc(key, doc, existed)
  local raw = MAGIC .. encode(doc)
  if existed then redis.call('SET', key, raw, 'KEEPTTL') else redis.call('SET', key, raw) end
  cache_put(key, raw, doc)
end

local function must_doc(key)
  local doc = load_doc(key)
  if doc == nil then err("ERR could not perform this operation on a key that doesn't exist") end
  return doc
end

local function parse_json_arg(s)
  check_utf8(s)
  return decode(s)
end

-- Replaces the value at a match (root when parent is nil); returns the new root.
local function replace_at(root, m, nv)
  if not m.parent then return nv end
  if m.parent.arr then m.parent[m.key] = nv else m.parent.map[m.key] = nv end
  return root
end

local function matches(doc, path)
  local p, legacy = normalize_path(path)
  local steps = compile_path(p)
  return select_nodes(steps, doc), legacy, steps
end

local function strip_descendants(ms)
  -- Drops matches inside another match (they go with it), and orders the rest so that later array
  -- indices are handled first (deleting them does not shift the others).
  local keyed = {}
  for _, m in ipairs(ms) do
    m.path = path_of(m.chain)
    local parts = {}
    for i, k in ipairs(m.path) do parts[i] = type(k) == 'number' and ('#' .. k) or ('.' .. k) end
    m.pkey = table.concat(parts, '\0') .. '\0'
    keyed[#keyed + 1] = m
  end
  local out = {}
  for _, m in ipairs(keyed) do
    local inside = false
    for _, o in ipairs(keyed) do
      if o ~= m and #o.pkey < #m.pkey and m.pkey:sub(1, #o.pkey) == o.pkey then inside = true; break end
    end
    local dup = false
    for _, o in ipairs(out) do if o.pkey == m.pkey then dup = true; break end end
    if not inside and not dup then out[#out + 1] = m end
  end
  table.sort(out, function(a, b)
    if a.parent == b.parent and type(a.key) == 'number' and type(b.key) == 'number' then return a.key > b.key end
    if #a.path ~= #b.path then return #a.path > #b.path end
    return a.pkey > b.pkey
  end)
  return out
end

local function remove_at(m)
  local p = m.parent
  if p.arr then
    table.remove(p, m.key)
    p.n = p.n - 1
  else
    p.map[m.key] = nil
    for i, k in ipairs(p.keys) do if k == m.key then table.remove(p.keys, i); break end end
  end
end

local function is_empty_container(v)
  return type(v) == 'table' and ((v.arr and v.n == 0) or (v.obj and #v.keys == 0))
end

---------------------------------------------------------------------------------------------------
-- Commands. Each gets the argument list after the command name (keys included) and returns a reply.

local C = {}

local function getopt_path(args, i) return args[i] or '.' end

function C.set(a)
  if #a < 3 then err("ERR wrong number of arguments for 'json.set' command") end
  local key, path, text = a[1], a[2], a[3]
  local cond
  local i = 4
  while i <= #a do
    local o = a[i]:upper()
    if (o == 'NX' or o == 'XX') and not cond then cond = o
    elseif o == 'FORMAT' then
      local f = (a[i + 1] or ''):upper(); i = i + 1
      if f ~= 'JSON' and f ~= 'STRING' then err('ERR wrong format') end
    else err('ERR syntax error') end
    i = i + 1
  end
  local doc = load_doc(key)
  local val = parse_json_arg(text)
  local p = normalize_path(path)
  local steps = compile_path(p)
  if doc == nil then
    if cond == 'XX' then return false end
    if #steps ~= 0 then err('ERR new objects must be created at the root') end
    store_doc(key, val, false)
    return { ok = 'OK' }
  end
  if #steps == 0 then
    if cond == 'NX' then return false end
    store_doc(key, val, true)
    return { ok = 'OK' }
  end
  if cond ~= 'NX' then
    local ms = select_nodes(steps, doc)
    if #ms > 0 then
      ms = strip_descendants(ms)
      for idx, m in ipairs(ms) do doc = replace_at(doc, m, idx == 1 and val or deep_copy(val)) end
      store_doc(key, doc, true)
      return { ok = 'OK' }
    end
  end
  if cond == 'XX' then return false end
  -- Creating a new member: only at the end of a static path whose parent exists.
  if not is_static(steps) then err('Err wrong static path') end
  local last = steps[#steps]
  if last.k == 'index' then
    local ms = select_nodes(steps, doc)
    if #ms == 0 then err('ERR array index out of range') end
    return false
  end
  local name = last.k == 'name' and last.v or last.list[1]
  local parent_steps = {}
  for j = 1, #steps - 1 do parent_steps[j] = steps[j] end
  local parents = select_nodes(parent_steps, doc)
  local added = false
  for _, m in ipairs(parents) do
    -- Like RedisJSON's dict_add: only a member that is not there yet.
    if type(m.v) == 'table' and m.v.obj and m.v.map[name] == nil then
      m.v.keys[#m.v.keys + 1] = name
      m.v.map[name] = added and deep_copy(val) or val
      added = true
    end
  end
  if not added then return false end
  store_doc(key, doc, true)
  return { ok = 'OK' }
end

local function format_opts(a, start)
  local fmt = {}
  local paths = {}
  local i = start
  while i <= #a do
    local o = a[i]
    local u = #o <= 8 and o:upper() or ''
    if u == 'INDENT' or u == 'NEWLINE' or u == 'SPACE' then
      if a[i + 1] == nil then err("ERR wrong number of arguments for 'json.get' command") end
      fmt[u:lower()] = a[i + 1]; i = i + 2
    elseif u == 'NOESCAPE' then i = i + 1
    elseif u == 'FORMAT' then err('ERR FORMAT argument is not supported on RESP2')
    else paths[#paths + 1] = o; i = i + 1 end
  end
  return fmt, paths
end

local function json_of_path(doc, path, fmt)
  local p, legacy = normalize_path(path)
  local ms = select_nodes(compile_path(p), doc)
  if legacy then
    if #ms == 0 then return nil, true end
    return encode(ms[1].v, fmt), true
  end
  local arr = { arr = true, n = #ms }
  for i, m in ipairs(ms) do arr[i] = m.v end
  return encode(arr, fmt), false
end

function C.get(a)
  if #a < 1 then err("ERR wrong number of arguments for 'json.get' command") end
  local fmt, paths = format_opts(a, 2)
  if next(fmt) == nil and (#paths == 0 or (#paths == 1 and (paths[1] == '.' or paths[1] == '$'))) then
    -- The whole document, compact: the stored text is already that.
    local raw = load_raw(a[1])
    if raw == nil then return false end
    local text = raw:sub(MAGIC_LEN + 1)
    if paths[1] == '$' then return '[' .. text .. ']' end
    return text
  end
  local doc = load_doc(a[1])
  if doc == nil then return false end
  if #paths == 0 then paths = { '.' } end
  if #paths == 1 then
    local text = json_of_path(doc, paths[1], fmt)
    if text == nil then err('ERR Path does not exist') end
    return text
  end
  -- Several paths: an object keyed by path (legacy values when every path is legacy).
  local all_legacy = true
  for _, p in ipairs(paths) do local _, l = normalize_path(p); if not l then all_legacy = false end end
  local o = { obj = true, keys = {}, map = {} }
  for _, p in ipairs(paths) do
    local np, legacy = normalize_path(p)
    local ms = select_nodes(compile_path(np), doc)
    local v
    if all_legacy then
      if #ms == 0 then err('ERR Path does not exist') end
      v = ms[1].v
    else
      v = { arr = true, n = #ms }
      for i, m in ipairs(ms) do v[i] = m.v end
    end
    if o.map[p] == nil then o.keys[#o.keys + 1] = p end
    o.map[p] = v
  end
  return encode(o, fmt)
end

function C.mget(a)
  if #a < 2 then err("ERR wrong number of arguments for 'json.mget' command") end
  local path = a[#a]
  local out = {}
  for i = 1, #a - 1 do
    local ok, doc = pcall(load_doc, a[i])
    local text = false
    if ok and doc ~= nil then
      local ok2, t = pcall(json_of_path, doc, path, nil)
      if ok2 then text = t or false
      elseif type(t) == 'table' and t.rgjson and t.rgjson:sub(1, 5) == 'Error' then error(t, 0) end
    end
    out[i] = text
  end
  return out
end

function C.mset(a)
  if #a < 3 or #a % 3 ~= 0 then err("ERR wrong number of arguments for 'json.mset' command") end
  -- Validate every triplet before changing anything.
  for i = 1, #a, 3 do
    local doc = load_doc(a[i])
    local p = normalize_path(a[i + 1])
    local steps = compile_path(p)
    if #steps > 0 and doc == nil then err('ERR new objects must be created at the root') end
    parse_json_arg(a[i + 2])
  end
  local all = true
  for i = 1, #a, 3 do
    local r = C.set({ a[i], a[i + 1], a[i + 2] })
    if r == false then all = false end
  end
  if all then return { ok = 'OK' } end
  return false
end

local function merge_into(target, patch)
  -- RFC 7396: objects merge key by key, null deletes, anything else replaces.
  if type(patch) ~= 'table' or not patch.obj then return patch end
  if type(target) ~= 'table' or not target.obj then target = { obj = true, keys = {}, map = {} } end
  for _, k in ipairs(patch.keys) do
    local pv = patch.map[k]
    if pv == NULL then
      if target.map[k] ~= nil then
        target.map[k] = nil
        for i, kk in ipairs(target.keys) do if kk == k then table.remove(target.keys, i); break end end
      end
    else
      if target.map[k] == nil then target.keys[#target.keys + 1] = k end
      target.map[k] = merge_into(target.map[k], pv)
    end
  end
  return target
end

function C.merge(a)
  if #a < 3 then err("ERR wrong number of arguments for 'json.merge' command") end
  local key, path, text = a[1], a[2], a[3]
  if #a > 3 then
    if #a == 5 and a[4]:upper() == 'FORMAT' then
    else err('ERR syntax error') end
  end
  local doc = load_doc(key)
  local val = parse_json_arg(text)
  local steps = compile_path((normalize_path(path)))
  if doc == nil then
    if #steps ~= 0 then err('ERR new objects must be created at the root') end
    if val == NULL then return { ok = 'OK' } end
    store_doc(key, merge_into(nil, val), false)
    return { ok = 'OK' }
  end
  if #steps == 0 then
    doc = merge_into(doc, val)
    if doc == NULL then delete_doc(key) else store_doc(key, doc, true) end
    return { ok = 'OK' }
  end
  local ms = select_nodes(steps, doc)
  local changed = false
  if #ms > 0 then
    for _, m in ipairs(ms) do
      if val == NULL then
        if m.parent then remove_at(m); changed = true end
      else
        doc = replace_at(doc, m, merge_into(m.v, deep_copy(val)))
        changed = true
      end
    end
  elseif is_static(steps) and steps[#steps].k ~= 'index' and val ~= NULL then
    local last = steps[#steps]
    local name = last.k == 'name' and last.v or last.list[1]
    local parent_steps = {}
    for j = 1, #steps - 1 do parent_steps[j] = steps[j] end
    for _, m in ipairs(select_nodes(parent_steps, doc)) do
      if type(m.v) == 'table' and m.v.obj then
        m.v.keys[#m.v.keys + 1] = name
        m.v.map[name] = merge_into(nil, deep_copy(val))
        changed = true
      end
    end
  end
  if not changed then return false end
  store_doc(key, doc, true)
  return { ok = 'OK' }
end

function C.del(a)
  if #a < 1 or #a > 2 then err("ERR wrong number of arguments for 'json.del' command") end
  local key = a[1]
  local doc = load_doc(key)
  if doc == nil then return 0 end
  local steps = compile_path((normalize_path(getopt_path(a, 2))))
  if #steps == 0 then delete_doc(key); return 1 end
  local ms = strip_descendants(select_nodes(steps, doc))
  local n = 0
  for _, m in ipairs(ms) do
    if m.parent then remove_at(m); n = n + 1 end
  end
  if n > 0 then
    if is_empty_container(doc) then delete_doc(key) else store_doc(key, doc, true) end
  end
  return n
end

function C.type(a)
  if #a < 1 or #a > 2 then err("ERR wrong number of arguments for 'json.type' command") end
  local doc = load_doc(a[1])
  if doc == nil then return false end -- nil for a missing key, with either path syntax (RESP2)
  local ms, legacy = matches(doc, getopt_path(a, 2))
  if legacy then
    if #ms == 0 then return false end
    return type_name(ms[1].v)
  end
  local out = {}
  for i, m in ipairs(ms) do out[i] = type_name(m.v) end
  return out
end

-- Commands that act on each match of one type: legacy paths answer for the last match (error when none),
-- JSONPath answers an array with nil for matches of another type.
local function per_match(a, want, fn, legacy_err, write)
  local key = a[1]
  local doc = must_doc(key)
  local ms, legacy = matches(doc, a[2])
  local changed = false
  if legacy then
    local res, any = nil, false
    for _, m in ipairs(ms) do
      if want(m.v) then
        local r, newv = fn(m)
        if newv ~= nil then doc = replace_at(doc, m, newv) end
        res = r; any = true
      end
    end
    if not any then err('ERR Path does not exist or ' .. legacy_err) end
    if write then store_doc(key, doc, true) end
    return res, true
  end
  local out = {}
  for i, m in ipairs(ms) do
    if want(m.v) then
      local r, newv = fn(m)
      if newv ~= nil then doc = replace_at(doc, m, newv) end
      out[i] = r
      changed = true
    else
      out[i] = false
    end
  end
  if write and changed then store_doc(key, doc, true) end
  return out, false
end

local function is_num(v) return type(v) == 'table' and v.num end
local function is_arr(v) return type(v) == 'table' and v.arr end
local function is_obj(v) return type(v) == 'table' and v.obj end
local function is_str(v) return type(v) == 'string' end
local function is_bool(v) return type(v) == 'boolean' end

local function num_op(a, name, op)
  if #a ~= 3 then err("ERR wrong number of arguments for '" .. name .. "' command") end
  local by = parse_json_arg(a[3])
  if not is_num(by) then err('ERR result is not a number') end
  local res, legacy = per_match(a, is_num, function(m)
    local v = m.v
    local nv
    if v.int and not v.u64 and by.int and not by.u64 then
      nv = { num = true, int = true }
      nv.s = op == 'incr' and int_add(v.s, by.s) or int_mul(v.s, by.s)
      nv.f = tonumber(nv.s)
    else
      local f = op == 'incr' and (v.f + by.f) or (v.f * by.f)
      if f ~= f or f == math.huge or f == -math.huge then err('ERR result is not a number') end
      nv = make_double(f)
    end
    return nv.s, nv
  end, 'does not contains a number', true)
  if legacy then return res end
  local arr = { arr = true, n = #res }
  for i, r in ipairs(res) do arr[i] = r and decode(r) or NULL end
  return encode(arr)
end
function C.numincrby(a) return num_op(a, 'json.numincrby', 'incr') end
function C.nummultby(a) return num_op(a, 'json.nummultby', 'mult') end

function C.toggle(a)
  if #a < 1 or #a > 2 then err("ERR wrong number of arguments for 'json.toggle' command") end
  local res, legacy = per_match({ a[1], getopt_path(a, 2) }, is_bool, function(m)
    local nv = not m.v
    return nv and 1 or 0, nv
  end, 'not a bool', true)
  if legacy then return res == 1 and 'true' or 'false' end
  return res
end

function C.strappend(a)
  local args
  if #a == 2 then args = { a[1], '.', a[2] } elseif #a == 3 then args = a
  else err("ERR wrong number of arguments for 'json.strappend' command") end
  local s = parse_json_arg(args[3])
  if not is_str(s) then err('WRONGTYPE wrong type of path value - expected string') end
  local res = per_match(args, is_str, function(m)
    local nv = m.v .. s
    return #nv, nv
  end, 'not a string', true)
  return res
end

function C.strlen(a)
  if #a < 1 or #a > 2 then err("ERR wrong number of arguments for 'json.strlen' command") end
  local path = getopt_path(a, 2)
  local _, legacy = normalize_path(path)
  local doc = load_doc(a[1])
  if legacy then
    if doc == nil then return false end
    local ms = matches(doc, path)
    if #ms == 0 then err('ERR Path does not exist') end
    if not is_str(ms[1].v) then err('WRONGTYPE wrong type of path value - expected string') end
    return #ms[1].v
  end
  if doc == nil then err("ERR could not perform this operation on a key that doesn't exist") end
  return (per_match({ a[1], path }, is_str, function(m) return #m.v end, 'not a string', false))
end

function C.arrappend(a)
  if #a < 3 then err("ERR wrong number of arguments for 'json.arrappend' command") end
  local vals = {}
  for i = 3, #a do vals[#vals + 1] = parse_json_arg(a[i]) end
  return (per_match(a, is_arr, function(m)
    for j, v in ipairs(vals) do
      m.v.n = m.v.n + 1
      m.v[m.v.n] = j == 1 and v or deep_copy(v)
    end
    return m.v.n
  end, 'not an array', true))
end

function C.arrindex(a)
  if #a < 3 or #a > 5 then err("ERR wrong number of arguments for 'json.arrindex' command") end
  local needle = parse_json_arg(a[3])
  local function int_arg(s)
    if s == nil then return 0 end
    if not s:match('^%-?%d+$') then err('ERR value is not an integer or out of range') end
    return tonumber(s)
  end
  local start, stop = int_arg(a[4]), int_arg(a[5])
  local doc = load_doc(a[1])
  if doc == nil then err('ERR Path does not exist') end
  local function find(arr)
    local len = arr.n
    if len == 0 then return -1 end
    local s = start < 0 and math.max(0, len + start) or math.min(start, len - 1)
    local e
    if stop == 0 then e = len elseif stop < 0 then e = math.max(0, len + stop) else e = math.min(stop, len) end
    for i = s, e - 1 do if equal(arr[i + 1], needle) then return i end end
    return -1
  end
  local ms, legacy = matches(doc, a[2])
  if legacy then
    if #ms == 0 then err('ERR Path does not exist') end
    if not is_arr(ms[1].v) then err('WRONGTYPE wrong type of path value - expected array') end
    return find(ms[1].v)
  end
  local out = {}
  for i, m in ipairs(ms) do out[i] = is_arr(m.v) and find(m.v) or false end
  return out
end

function C.arrinsert(a)
  if #a < 4 then err("ERR wrong number of arguments for 'json.arrinsert' command") end
  if not a[3]:match('^%-?%d+$') then err('ERR value is not an integer or out of range') end
  local index = tonumber(a[3])
  local vals = {}
  for i = 4, #a do vals[#vals + 1] = parse_json_arg(a[i]) end
  return (per_match(a, is_arr, function(m)
    local arr = m.v
    local idx = index < 0 and arr.n + index or index
    if idx < 0 or idx > arr.n then err('ERR index out of bounds') end
    for j, v in ipairs(vals) do
      table.insert(arr, idx + j, j == 1 and v or deep_copy(v))
      arr.n = arr.n + 1
    end
    return arr.n
  end, 'not an array', true))
end

-- The matches of a read of one optional path (JSON.ARRLEN, OBJKEYS, OBJLEN), and whether the path is
-- legacy. A missing key: nil under a legacy path (the command answers null), else the error `missing`.
local function read_matches(a, name, missing)
  if #a < 1 or #a > 2 then err("ERR wrong number of arguments for '" .. name .. "' command") end
  local path = getopt_path(a, 2)
  local _, legacy = normalize_path(path)
  local doc = load_doc(a[1])
  if doc == nil then
    if legacy then return nil, true end
    err(missing)
  end
  return matches(doc, path), legacy
end

function C.arrlen(a)
  local ms, legacy = read_matches(a, 'json.arrlen', "ERR could not perform this operation on a key that doesn't exist")
  if ms == nil then return false end
  if legacy then
    if #ms == 0 then err('ERR Path does not exist') end
    if not is_arr(ms[1].v) then err('ERR Path does not exist or not an array') end
    return ms[1].v.n
  end
  local out = {}
  for i, m in ipairs(ms) do out[i] = is_arr(m.v) and m.v.n or false end
  return out
end

function C.arrpop(a)
  if #a < 1 or #a > 3 then err("ERR wrong number of arguments for 'json.arrpop' command") end
  local path = a[2] or '.'
  local index = math.huge
  if a[2] ~= nil then
    index = -1
    if a[3] ~= nil then
      if not a[3]:match('^%-?%d+$') then err('ERR value is not an integer or out of range') end
      index = tonumber(a[3])
    end
  end
  local res, legacy = per_match({ a[1], path }, is_arr, function(m)
    local arr = m.v
    if arr.n == 0 then return false end
    local i = index < 0 and math.max(0, arr.n + index) or math.min(index, arr.n - 1)
    local v = table.remove(arr, i + 1)
    arr.n = arr.n - 1
    return encode(v)
  end, 'not an array', true)
  if legacy then return res or false end
  return res
end

function C.arrtrim(a)
  if #a ~= 4 then err("ERR wrong number of arguments for 'json.arrtrim' command") end
  for i = 3, 4 do if not a[i]:match('^%-?%d+$') then err('ERR value is not an integer or out of range') end end
  local start, stop = tonumber(a[3]), tonumber(a[4])
  return (per_match(a, is_arr, function(m)
    local arr = m.v
    local len = arr.n
    local function norm(x) if x < 0 then return math.max(len + x, 0) end return math.min(x, len - 1) end
    local st = norm(stop)
    local s
    if start < 0 or start < len then s = norm(start) else s = st + 1 end
    local keep = {}
    if not (s > st or len == 0) then for i = s, st do keep[#keep + 1] = arr[i + 1] end end
    for i = 1, len do arr[i] = nil end
    for i, v in ipairs(keep) do arr[i] = v end
    arr.n = #keep
    return arr.n
  end, 'not an array', true))
end

function C.objkeys(a)
  local ms, legacy = read_matches(a, 'json.objkeys', "ERR could not perform this operation on a key that doesn't exist")
  if ms == nil then return false end
  if legacy then
    if #ms == 0 then return false end
    if not is_obj(ms[1].v) then err('ERR Path does not exist or not an object') end
    return { unpack(ms[1].v.keys) }
  end
  local out = {}
  for i, m in ipairs(ms) do out[i] = is_obj(m.v) and { unpack(m.v.keys) } or false end
  return out
end

function C.objlen(a)
  local ms, legacy = read_matches(a, 'json.objlen', 'ERR Path does not exist or not an object')
  if ms == nil then return false end
  if legacy then
    if #ms == 0 then return false end
    if not is_obj(ms[1].v) then err('WRONGTYPE wrong type of path value - expected object') end
    return #ms[1].v.keys
  end
  local out = {}
  for i, m in ipairs(ms) do out[i] = is_obj(m.v) and #m.v.keys or false end
  return out
end

function C.clear(a)
  if #a < 1 or #a > 2 then err("ERR wrong number of arguments for 'json.clear' command") end
  local key = a[1]
  local doc = must_doc(key)
  local ms = matches(doc, getopt_path(a, 2))
  local n = 0
  for _, m in ipairs(ms) do
    local v = m.v
    if is_arr(v) and v.n > 0 then
      for i = 1, v.n do v[i] = nil end
      v.n = 0; n = n + 1
    elseif is_obj(v) and #v.keys > 0 then
      v.keys = {}; v.map = {}; n = n + 1
    elseif is_num(v) and v.f ~= 0 then
      doc = replace_at(doc, m, { num = true, s = '0', f = 0, int = true }); n = n + 1
    end
  end
  if n > 0 then store_doc(key, doc, true) end
  return n
end

local function resp_of(v)
  if v == NULL then return false end
  local t = type(v)
  if t == 'boolean' then return { ok = v and 'true' or 'false' } end
  if t == 'string' then return v end
  if v.num then
    if v.int and not v.u64 and math.abs(v.f) < 9007199254740992 then return v.f end
    return v.s
  end
  if v.arr then
    local out = { { ok = '[' } }
    for i = 1, v.n do out[#out + 1] = resp_of(v[i]) end
    return out
  end
  local out = { { ok = '{' } }
  for _, k in ipairs(v.keys) do out[#out + 1] = k; out[#out + 1] = resp_of(v.map[k]) end
  return out
end

function C.resp(a)
  if #a < 1 or #a > 2 then err("ERR wrong number of arguments for 'json.resp' command") end
  local doc = load_doc(a[1])
  if doc == nil then return false end
  local ms, legacy = matches(doc, getopt_path(a, 2))
  if legacy then
    if #ms == 0 then err('ERR Path does not exist') end
    return resp_of(ms[1].v)
  end
  local out = {}
  for i, m in ipairs(ms) do out[i] = resp_of(m.v) end
  return out
end

local function memory_of(v)
  -- An estimate in the spirit of RedisJSON's (value header plus payload); see docs/json.md.
  if v == NULL or type(v) == 'boolean' then return 8 end
  if type(v) == 'string' then return 8 + (#v > 0 and #v + 16 or 0) end
  if v.num then return 8 end
  local total = 8
  if v.arr then
    if v.n > 0 then total = total + 16 + 8 * v.n end
    for i = 1, v.n do total = total + memory_of(v[i]) end
    return total
  end
  if #v.keys > 0 then total = total + 16 + 16 * #v.keys end
  for _, k in ipairs(v.keys) do total = total + #k + 16 + memory_of(v.map[k]) end
  return total
end

function C.debug(a)
  local sub = (a[1] or ''):upper()
  if sub == 'HELP' then
    return { 'MEMORY <key> [path] - reports memory usage', 'HELP                - this message' }
  end
  if sub ~= 'MEMORY' then err('ERR unknown subcommand - try `JSON.DEBUG HELP`') end
  if #a < 2 or #a > 3 then err("ERR wrong number of arguments for 'json.debug|memory' command") end
  local doc = load_doc(a[2])
  local path = a[3] or '.'
  local _, legacy = normalize_path(path)
  if doc == nil then return legacy and 0 or {} end
  local ms = matches(doc, path)
  if legacy then
    if #ms == 0 then err('ERR Path does not exist') end
    return memory_of(ms[1].v)
  end
  local out = {}
  for i, m in ipairs(ms) do out[i] = memory_of(m.v) end
  return out
end

-- TYPE, as the platform answers it for every key: ReJSON-RL for documents.
function C.keytype(a)
  local t = redis.call('TYPE', a[1])['ok']
  if t == 'string' and redis.call('GETRANGE', a[1], 0, MAGIC_LEN - 1) == MAGIC then t = 'ReJSON-RL' end
  return { ok = t }
end

-- Which of the given keys hold documents (for SCAN ... TYPE ReJSON-RL and TYPE string).
function C.which(a)
  local out = {}
  for i, k in ipairs(a) do
    out[i] = (redis.call('TYPE', k)['ok'] == 'string' and redis.call('GETRANGE', k, 0, MAGIC_LEN - 1) == MAGIC) and 1 or 0
  end
  return out
end

function C.version() return 1 end

local WRITES = { set = true, mset = true, merge = true, del = true, numincrby = true, nummultby = true,
  toggle = true, strappend = true, arrappend = true, arrinsert = true, arrpop = true, arrtrim = true, clear = true }

local function dispatch(keys, args, writable)
  local name = args[1]
  local fn = C[name]
  if not fn then return redis.error_reply('ERR unknown JSON command ' .. tostring(name)) end
  if WRITES[name] and not writable then return redis.error_reply('ERR JSON.' .. name:upper() .. ' is a write command') end
  local rest = {}
  for i = 2, #args do rest[i - 1] = args[i] end
  local ok, res = pcall(fn, rest)
  if ok then return res end
  clear_cache()
  if type(res) == 'table' and res.rgjson then return { err = res.rgjson } end
  if type(res) == 'table' and res.err then return res end
  return { err = 'ERR ' .. tostring(res) }
end

redis.register_function{ function_name = 'respgate_json', callback = function(keys, args) return dispatch(keys, args, true) end }
redis.register_function{ function_name = 'respgate_json_ro', callback = function(keys, args) return dispatch(keys, args, false) end, flags = { 'no-writes' } }
