// A cert-manager controller for the local control plane: the Certificate lifecycle plus the
// SelfSigned and CA issuers, wired from cert-manager's public packages (its own cmd/ binaries
// are separate modules the Go proxy does not serve). No ACME, Vault, Venafi, shims or leader
// election: the tests need a real issuer for the chart's webhook certificate, nothing more.
package main

import (
	"context"
	"flag"
	"fmt"
	"os"
	"os/signal"
	"sort"
	"sync"
	"syscall"

	"k8s.io/klog/v2"

	"github.com/cert-manager/cert-manager/pkg/controller"
	_ "github.com/cert-manager/cert-manager/pkg/controller/certificaterequests/approver"
	_ "github.com/cert-manager/cert-manager/pkg/controller/certificaterequests/ca"
	_ "github.com/cert-manager/cert-manager/pkg/controller/certificaterequests/selfsigned"
	_ "github.com/cert-manager/cert-manager/pkg/controller/certificates/issuing"
	_ "github.com/cert-manager/cert-manager/pkg/controller/certificates/keymanager"
	_ "github.com/cert-manager/cert-manager/pkg/controller/certificates/readiness"
	_ "github.com/cert-manager/cert-manager/pkg/controller/certificates/requestmanager"
	_ "github.com/cert-manager/cert-manager/pkg/controller/certificates/revisionmanager"
	_ "github.com/cert-manager/cert-manager/pkg/controller/certificates/trigger"
	_ "github.com/cert-manager/cert-manager/pkg/controller/clusterissuers"
	_ "github.com/cert-manager/cert-manager/pkg/controller/issuers"
	_ "github.com/cert-manager/cert-manager/pkg/issuer/ca"
	_ "github.com/cert-manager/cert-manager/pkg/issuer/selfsigned"
	logf "github.com/cert-manager/cert-manager/pkg/logs"
)

// version is stamped by build.sh (-X main.version=…) so its cache check can ask the binary.
var version = "dev"

func main() {
	// A flag set of our own: controller-runtime registers --kubeconfig on the global one.
	fs := flag.NewFlagSet("cert-manager-controller", flag.ExitOnError)
	kubeconfig := fs.String("kubeconfig", "", "path to a kubeconfig")
	namespace := fs.String("namespace", "", "watch only this namespace (default: all)")
	clusterResourceNamespace := fs.String("cluster-resource-namespace", "cert-manager", "namespace of ClusterIssuer secrets")
	showVersion := fs.Bool("version", false, "print the version and exit")
	klog.InitFlags(fs)
	_ = fs.Parse(os.Args[1:])
	if *showVersion {
		fmt.Println("cert-manager-controller " + version)
		return
	}
	if err := run(*kubeconfig, *namespace, *clusterResourceNamespace); err != nil {
		fmt.Fprintln(os.Stderr, "cert-manager-controller:", err)
		os.Exit(1)
	}
}

func run(kubeconfig, namespace, clusterResourceNamespace string) error {
	ctx, stop := signal.NotifyContext(context.Background(), os.Interrupt, syscall.SIGTERM)
	defer stop()
	ctx = logf.NewContext(ctx, logf.Log, "controller")

	factory, err := controller.NewContextFactory(ctx, controller.ContextOptions{
		Kubeconfig:         kubeconfig,
		Namespace:          namespace,
		KubernetesAPIQPS:   50,
		KubernetesAPIBurst: 100,
		IssuerOptions:      controller.IssuerOptions{ClusterResourceNamespace: clusterResourceNamespace},
	})
	if err != nil {
		return err
	}

	known := controller.Known()
	names := make([]string, 0, len(known))
	for name := range known {
		names = append(names, name)
	}
	sort.Strings(names)

	var wg sync.WaitGroup
	errs := make(chan error, len(names))
	for _, name := range names {
		iface, err := known[name](factory)
		if err != nil {
			return fmt.Errorf("controller %s: %w", name, err)
		}
		wg.Add(1)
		go func() {
			defer wg.Done()
			if err := iface.Run(2, ctx); err != nil {
				errs <- fmt.Errorf("controller %s: %w", name, err)
			}
		}()
	}

	// The informer factories are shared by every Context the factory builds: constructing the
	// controllers registered their informers, starting them here feeds all of them.
	shared, err := factory.Build()
	if err != nil {
		return err
	}
	shared.SharedInformerFactory.Start(ctx.Done())
	shared.KubeSharedInformerFactory.Start(ctx.Done())
	shared.HTTP01ResourceMetadataInformersFactory.Start(ctx.Done())
	klog.InfoS("cert-manager controller running", "controllers", names)

	select {
	case err := <-errs:
		stop()
		wg.Wait()
		return err
	case <-ctx.Done():
		wg.Wait()
		return nil
	}
}
