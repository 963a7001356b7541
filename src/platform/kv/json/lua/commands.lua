-- respgate_json, commands.lua: the JSON.* commands, dispatch, and the two registered functions.
-- One part of one function library: library.ts joins the parts in order into the one text FUNCTION
-- LOAD takes, so each part sees the locals of the parts before it. Not loadable on its own.
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
