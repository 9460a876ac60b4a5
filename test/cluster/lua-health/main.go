// lua-health runs an Argo CD resource health check the way Argo CD does (util/lua in argo-cd):
// gopher-lua with only the package, base and table libraries opened (Argo CD's default; no
// string, math or io), a one-second deadline, the object as the global `obj` (JSON maps as
// tables, arrays as sequences, numbers as Lua numbers), and the script's returned table read
// as {status, message}, where status must be one Argo CD knows.
//
//	lua-health SCRIPT.lua < objects.json    (a JSON array of objects)
//
// prints a JSON array of {"status": …, "message": …}, one per object, or exits 1 naming the
// object whose check failed.
package main

import (
	"context"
	"encoding/json"
	"fmt"
	"os"
	"time"

	lua "github.com/yuin/gopher-lua"
)

var version = "dev"

type health struct {
	Status  string `json:"status"`
	Message string `json:"message"`
}

// The health statuses of Argo CD's gitops-engine (health.HealthStatusCode).
var known = map[string]bool{"Healthy": true, "Progressing": true, "Degraded": true, "Suspended": true, "Missing": true, "Unknown": true}

func decode(l *lua.LState, v any) lua.LValue {
	switch v := v.(type) {
	case nil:
		return lua.LNil
	case bool:
		return lua.LBool(v)
	case float64:
		return lua.LNumber(v)
	case string:
		return lua.LString(v)
	case []any:
		t := l.NewTable()
		for _, item := range v {
			t.Append(decode(l, item))
		}
		return t
	case map[string]any:
		t := l.NewTable()
		for k, item := range v {
			t.RawSetString(k, decode(l, item))
		}
		return t
	}
	panic(fmt.Sprintf("unexpected JSON value %T", v))
}

func run(script string, obj map[string]any) (health, error) {
	l := lua.NewState(lua.Options{SkipOpenLibs: true})
	defer l.Close()
	for _, lib := range []struct {
		name string
		open lua.LGFunction
	}{{lua.LoadLibName, lua.OpenPackage}, {lua.BaseLibName, lua.OpenBase}, {lua.TabLibName, lua.OpenTable}} {
		if err := l.CallByParam(lua.P{Fn: l.NewFunction(lib.open), NRet: 0, Protect: true}, lua.LString(lib.name)); err != nil {
			return health{}, err
		}
	}
	ctx, cancel := context.WithTimeout(context.Background(), time.Second)
	defer cancel()
	l.SetContext(ctx)
	l.SetGlobal("obj", decode(l, obj))
	if err := l.DoString(script); err != nil {
		return health{}, err
	}
	table, ok := l.Get(-1).(*lua.LTable)
	if !ok {
		return health{}, fmt.Errorf("the script returned %s, not a table", l.Get(-1).Type())
	}
	h := health{Status: lua.LVAsString(table.RawGetString("status")), Message: lua.LVAsString(table.RawGetString("message"))}
	if !known[h.Status] {
		return health{}, fmt.Errorf("the script returned status %q, which Argo CD does not know", h.Status)
	}
	return h, nil
}

func main() {
	if len(os.Args) == 2 && os.Args[1] == "--version" {
		fmt.Println(version)
		return
	}
	if len(os.Args) != 2 {
		fmt.Fprintln(os.Stderr, "usage: lua-health SCRIPT.lua < objects.json")
		os.Exit(2)
	}
	script, err := os.ReadFile(os.Args[1])
	if err != nil {
		fmt.Fprintln(os.Stderr, err)
		os.Exit(2)
	}
	var objects []map[string]any
	if err := json.NewDecoder(os.Stdin).Decode(&objects); err != nil {
		fmt.Fprintf(os.Stderr, "stdin: a JSON array of objects: %v\n", err)
		os.Exit(2)
	}
	results := make([]health, 0, len(objects))
	for i, obj := range objects {
		h, err := run(string(script), obj)
		if err != nil {
			fmt.Fprintf(os.Stderr, "object %d: %v\n", i, err)
			os.Exit(1)
		}
		results = append(results, h)
	}
	if err := json.NewEncoder(os.Stdout).Encode(results); err != nil {
		fmt.Fprintln(os.Stderr, err)
		os.Exit(1)
	}
}
