// Command etcd is the etcd server Kubernetes itself pins, built from this module
// because `go install go.etcd.io/etcd/server/v3` cannot resolve its replaces.
package main

import (
	"os"

	"go.etcd.io/etcd/server/v3/etcdmain"
)

func main() {
	etcdmain.Main(os.Args)
}
