// Argo CD's Lua runtime (gopher-lua, the version Argo CD v3 pins) for testing the health check in
// docs/argocd/: a module of its own so the control plane's go.mod (../go.mod) stays unchanged.
module kaos.tools/operator/test/cluster/lua-health

go 1.26.0

require github.com/yuin/gopher-lua v1.1.1
