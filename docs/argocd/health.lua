-- Argo CD health check for kaos.tools Agent, ModelAPI, MCPServer and MemoryStore (the same script for all
-- four: their status has one shape). It reads the status the way kstatus does, so Argo CD and
-- Flux agree:
--   no status written by the operator yet (no observedGeneration: the CRD's default status,
--   a Ready condition Unknown/Pending) or a newer spec not yet observed      -> Progressing
--   Stalled=True (phase Failed for a reason retrying will not fix)           -> Degraded
--   phase Ready with Ready=True                                              -> Healthy
--   settled where the user asked it to be (Reconciling=False and not Ready:
--   an Agent scaled to zero replicas, reason ScaledToZero)                   -> Healthy
--   anything else: Pending, Waiting (an Agent's dependencies), Failed that
--   the operator retries (e.g. a ModelAPI not created yet: sync waves)       -> Progressing
-- Argo CD runs it in gopher-lua with only the base and table libraries: no string functions.
-- Tested by test/unit/argocd-health.test.ts with test/cluster/lua-health (Argo CD's runtime).
local hs = { status = "Progressing", message = "Waiting for kaos-operator to reconcile" }
local status = obj.status
if status == nil or status.observedGeneration == nil then
  return hs
end
local generation = obj.metadata.generation
if generation ~= nil and status.observedGeneration < generation then
  hs.message = "Waiting for kaos-operator to observe generation " .. generation
  return hs
end

local function condition(type)
  if status.conditions == nil then
    return nil
  end
  for _, c in ipairs(status.conditions) do
    if c.type == type then
      return c
    end
  end
  return nil
end

local phase = status.phase or "Pending"
local message = status.message or ""
local stalled = condition("Stalled")
if stalled ~= nil and stalled.status == "True" then
  hs.status = "Degraded"
  hs.message = stalled.message or message
  return hs
end
local ready = condition("Ready")
if phase == "Ready" and ready ~= nil and ready.status == "True" then
  hs.status = "Healthy"
  hs.message = message
  return hs
end
if message ~= "" then
  hs.message = phase .. ": " .. message
else
  hs.message = phase
end
local reconciling = condition("Reconciling")
if reconciling ~= nil and reconciling.status == "False" then
  hs.status = "Healthy"
end
return hs
