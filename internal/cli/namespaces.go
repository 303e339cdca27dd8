package cli

import (
	corev1 "k8s.io/api/core/v1"

	"fmt"
	"io"
	"strings"

	"github.com/spf13/pflag"

	"github.com/tollgate-dev/tollgate/internal/namespaces"

	"sigs.k8s.io/yaml"

	"github.com/tollgate-dev/tollgate/internal/manifest"
)

// namespaceIndex holds the namespace labels given on the command line.
type namespaceIndex map[string]map[string]string

func (n namespaceIndex) lookup(name string) (*corev1.Namespace, bool) {
	l, ok := n[name]
	return namespaces.Of(name, l), ok
}

// namespaceFlags are --namespace-labels and --namespaces, of check and replay.
type namespaceFlags struct {
	namespaceLabels []string
	namespacesFile  string
}

func (o *namespaceFlags) addFlags(f *pflag.FlagSet) {
	f.StringArrayVar(&o.namespaceLabels, "namespace-labels", nil, "labels of a namespace, NS=KEY=VALUE,KEY=VALUE (repeatable)")
	f.StringVar(&o.namespacesFile, "namespaces", "", "file of Namespace objects whose labels namespaceSelectors see")
}

// namespaceIndex reads --namespace-labels and --namespaces. lookup adds
// kubernetes.io/metadata.name (policy.NamespaceOf), as the apiserver does.
func (o *namespaceFlags) namespaceIndex(stdin io.Reader) (namespaceIndex, error) {
	idx := namespaceIndex{}
	add := func(ns string, labels map[string]string) {
		if idx[ns] == nil {
			idx[ns] = map[string]string{}
		}
		for k, v := range labels {
			idx[ns][k] = v
		}
	}
	for _, spec := range o.namespaceLabels {
		ns, rest, ok := strings.Cut(spec, "=")
		if !ok || ns == "" {
			return nil, fmt.Errorf("--namespace-labels %q: want NS=KEY=VALUE,KEY=VALUE", spec)
		}
		labels := map[string]string{}
		for _, kv := range strings.Split(rest, ",") {
			k, v, ok := strings.Cut(kv, "=")
			if !ok || k == "" {
				return nil, fmt.Errorf("--namespace-labels %q: %q is not KEY=VALUE", spec, kv)
			}
			labels[k] = v
		}
		add(ns, labels)
	}
	if o.namespacesFile != "" {
		objs, err := manifest.Read([]string{o.namespacesFile}, stdin)
		if err != nil {
			return nil, err
		}
		for _, obj := range objs {
			if obj.GVK.Kind != "Namespace" {
				return nil, fmt.Errorf("%s: %s is not a Namespace", obj.Where(), obj)
			}
			var ns struct {
				Metadata struct {
					Labels map[string]string `json:"labels"`
				} `json:"metadata"`
			}
			if err := yaml.Unmarshal(obj.JSON, &ns); err != nil {
				return nil, fmt.Errorf("%s: %w", obj.Where(), err)
			}
			add(obj.Name, ns.Metadata.Labels)
		}
	}
	return idx, nil
}
