-- respgate_json, bignum.lua: exact i64/u64 integer text and arithmetic; doubles as RedisJSON prints them.
-- One part of one function library: library.ts joins the parts in order into the one text FUNCTION
-- LOAD takes, so each part sees the locals of the parts before it. Not loadable on its own.
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

