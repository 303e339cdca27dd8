package cli

import (
	"errors"
	"fmt"
	"io"
	"path/filepath"

	"github.com/tollgate-dev/tollgate/internal/staticmanifests"
)

// runStatic writes the configurations as the apiserver's static manifests
// into o.static, says what it wrote on stderr, and prints the
// AdmissionConfiguration that reads them.
func (o *manifestsOptions) runStatic(stdout, stderr io.Writer) error {
	if o.serviceName != "" || o.serviceNamespace != "" {
		return usageError(errors.New("--static needs --url: the apiserver calls static webhooks by URL only (it refuses clientConfig.service in static manifests); give the address it reaches tollgate at, e.g. https://127.0.0.1:8443 for tollgate on each control-plane node"))
	}
	if o.url == "" {
		return usageError(errors.New("--static needs --url, the address the apiserver reaches tollgate at"))
	}
	dir, err := filepath.Abs(o.static)
	if err != nil {
		return err
	}
	apiserverDir := o.apiserverDir
	if apiserverDir == "" {
		apiserverDir = dir
	}
	// Checked before anything is written.
	config, err := staticmanifests.AdmissionConfiguration(apiserverDir, o.admissionKubeconfig)
	if err != nil {
		return usageError(fmt.Errorf("--apiserver-static-dir or --admission-kubeconfig: %w", err))
	}
	mutating, validating, err := o.build()
	if err != nil {
		return err
	}
	files, err := staticmanifests.Write(dir, o.name, mutating, validating)
	for _, f := range files {
		switch {
		case f.Removed:
			fmt.Fprintf(stderr, "removed %s: no policy needs a %s\n", f.Path, f.Kind)
		case f.Name != "":
			fmt.Fprintf(stderr, "wrote %s: %s %s, %d webhooks\n", f.Path, f.Kind, f.Name, f.Webhooks)
		}
	}
	if err != nil {
		return err
	}
	hashes, err := staticmanifests.Hashes(dir)
	if err != nil {
		return err
	}
	for _, p := range []string{staticmanifests.MutatingPlugin, staticmanifests.ValidatingPlugin} {
		if h, ok := hashes[p]; ok {
			fmt.Fprintf(stderr, "an apiserver has loaded the %s directory when its metric %s{plugin=%q} has hash=%q\n", p, staticmanifests.ConfigInfoMetric, p, h)
		}
	}
	_, err = stdout.Write(config)
	return err
}
