-- respgate_json, values.lua: the document marker, the shapes of values, err() and the UTF-8 check.
-- One part of one function library: library.ts joins the parts in order into the one text FUNCTION
-- LOAD takes, so each part sees the locals of the parts before it. Not loadable on its own.
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


