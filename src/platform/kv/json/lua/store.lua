-- respgate_json, store.lua: documents in keys: load and store, the decoded-document cache, edits.
-- One part of one function library: library.ts joins the parts in order into the one text FUNCTION
-- LOAD takes, so each part sees the locals of the parts before it. Not loadable on its own.
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

