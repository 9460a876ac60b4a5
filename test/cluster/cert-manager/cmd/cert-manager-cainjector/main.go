// A cert-manager cainjector for the local control plane: copies a Certificate's CA into the
// webhook configurations annotated cert-manager.io/inject-ca-from (and inject-ca-from-secret),
// wired from cert-manager's public pkg/controller/cainjector on a controller-runtime manager.
package main

import (
	"context"
	"flag"
	"fmt"
	"os"
	"os/signal"
	"syscall"

	apiext "k8s.io/apiextensions-apiserver/pkg/apis/apiextensions/v1"
	"k8s.io/apimachinery/pkg/runtime"
	kscheme "k8s.io/client-go/kubernetes/scheme"
	"k8s.io/client-go/tools/clientcmd"
	"k8s.io/klog/v2"
	apireg "k8s.io/kube-aggregator/pkg/apis/apiregistration/v1"
	ctrl "sigs.k8s.io/controller-runtime"
	"sigs.k8s.io/controller-runtime/pkg/cache"
	metricsserver "sigs.k8s.io/controller-runtime/pkg/metrics/server"

	cmscheme "github.com/cert-manager/cert-manager/pkg/client/clientset/versioned/scheme"
	"github.com/cert-manager/cert-manager/pkg/controller/cainjector"
	"github.com/cert-manager/cert-manager/pkg/util"
)

// version is stamped by build.sh (-X main.version=…) so its cache check can ask the binary.
var version = "dev"

func main() {
	// A flag set of our own: controller-runtime registers --kubeconfig on the global one.
	fs := flag.NewFlagSet("cert-manager-cainjector", flag.ExitOnError)
	kubeconfig := fs.String("kubeconfig", "", "path to a kubeconfig")
	namespace := fs.String("namespace", "", "watch only this namespace (default: all)")
	showVersion := fs.Bool("version", false, "print the version and exit")
	klog.InitFlags(fs)
	_ = fs.Parse(os.Args[1:])
	if *showVersion {
		fmt.Println("cert-manager-cainjector " + version)
		return
	}
	if err := run(*kubeconfig, *namespace); err != nil {
		fmt.Fprintln(os.Stderr, "cert-manager-cainjector:", err)
		os.Exit(1)
	}
}

func run(kubeconfig, namespace string) error {
	ctx, stop := signal.NotifyContext(context.Background(), os.Interrupt, syscall.SIGTERM)
	defer stop()
	ctrl.SetLogger(klog.NewKlogr())

	cfg, err := clientcmd.BuildConfigFromFlags("", kubeconfig)
	if err != nil {
		return fmt.Errorf("kubeconfig: %w", err)
	}
	scheme := runtime.NewScheme()
	for _, add := range []func(*runtime.Scheme) error{kscheme.AddToScheme, cmscheme.AddToScheme, apiext.AddToScheme, apireg.AddToScheme} {
		if err := add(scheme); err != nil {
			return err
		}
	}
	var namespaces map[string]cache.Config
	if namespace != "" {
		namespaces = map[string]cache.Config{namespace: {}}
	}
	mgr, err := ctrl.NewManager(util.RestConfigWithUserAgent(cfg, "cainjector"), ctrl.Options{
		Scheme:         scheme,
		Cache:          cache.Options{DefaultNamespaces: namespaces},
		LeaderElection: false,
		Metrics:        metricsserver.Options{BindAddress: "0"},
	})
	if err != nil {
		return fmt.Errorf("manager: %w", err)
	}
	err = cainjector.RegisterAllInjectors(ctx, mgr, cainjector.SetupOptions{
		Namespace:                    namespace,
		EnableCertificatesDataSource: true,
		EnabledReconcilersFor: map[string]bool{
			cainjector.MutatingWebhookConfigurationName:   true,
			cainjector.ValidatingWebhookConfigurationName: true,
			cainjector.APIServiceName:                     false,
			cainjector.CustomResourceDefinitionName:       false,
		},
	})
	if err != nil {
		return fmt.Errorf("register injectors: %w", err)
	}
	klog.InfoS("cert-manager cainjector running")
	return mgr.Start(ctx)
}
