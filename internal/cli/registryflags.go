package cli

import (
	"crypto/x509"
	"fmt"
	"os"

	"github.com/google/go-containerregistry/pkg/authn"
	"github.com/spf13/pflag"

	"github.com/tollgate-dev/tollgate/internal/imageverify"
)

// registryFlags are how commands reach registries for verifyImages
// policies: --insecure-registry and --registry-ca-file, shared by serve,
// check, review, audit, replay and test.
type registryFlags struct {
	insecure []string
	caFile   string
}

func addRegistryFlags(fs *pflag.FlagSet, r *registryFlags) {
	fs.StringArrayVar(&r.insecure, "insecure-registry", nil, "a registry host[:port] reached over plain HTTP, for verifyImages policies (repeatable); loopback registries always are")
	fs.StringVar(&r.caFile, "registry-ca-file", "", "PEM CAs registries' certificates must chain to, instead of the system's, for verifyImages policies")
}

// registries reads the flags; offline commands use the credentials of
// the docker config (~/.docker/config.json, $DOCKER_CONFIG), as
// cosign and crane do.
func (r registryFlags) registries(offline bool) (imageverify.Registries, error) {
	out := imageverify.Registries{Insecure: r.insecure}
	if offline {
		out.Keychain = authn.DefaultKeychain
	}
	if r.caFile != "" {
		pem, err := os.ReadFile(r.caFile)
		if err != nil {
			return out, fmt.Errorf("--registry-ca-file: %w", err)
		}
		out.RootCAs = x509.NewCertPool()
		if !out.RootCAs.AppendCertsFromPEM(pem) {
			return out, fmt.Errorf("--registry-ca-file %s: no PEM certificate in it", r.caFile)
		}
	}
	return out, nil
}

// verifier is the image verifier of an offline command.
func (r registryFlags) verifier() (*imageverify.Verifier, error) {
	regs, err := r.registries(true)
	if err != nil {
		return nil, err
	}
	return imageverify.New(imageverify.Options{Registries: regs}), nil
}
