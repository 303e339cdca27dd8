//go:build e2e

// Temporary (not committed): a control plane for the docs walk-through.
package main

import (
	"fmt"
	"os"
	"os/signal"

	"k8s.io/client-go/tools/clientcmd"
	clientcmdapi "k8s.io/client-go/tools/clientcmd/api"

	"github.com/tollgate-dev/tollgate/test/e2e/framework"
)

func main() {
	env, _, err := framework.StartControlPlane(nil)
	if err != nil {
		panic(err)
	}
	defer env.Stop()
	cfg := env.Config
	kc := clientcmdapi.NewConfig()
	kc.Clusters["envtest"] = &clientcmdapi.Cluster{Server: cfg.Host, CertificateAuthorityData: cfg.CAData}
	kc.AuthInfos["admin"] = &clientcmdapi.AuthInfo{ClientCertificateData: cfg.CertData, ClientKeyData: cfg.KeyData, Token: cfg.BearerToken}
	kc.Contexts["envtest"] = &clientcmdapi.Context{Cluster: "envtest", AuthInfo: "admin"}
	kc.CurrentContext = "envtest"
	if err := clientcmd.WriteToFile(*kc, os.Args[1]); err != nil {
		panic(err)
	}
	fmt.Println("ready", cfg.Host)
	c := make(chan os.Signal, 1)
	signal.Notify(c, os.Interrupt)
	<-c
}
