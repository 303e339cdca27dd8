package gatekeeper

import (
	"fmt"
	"slices"

	configv1alpha1 "github.com/open-policy-agent/gatekeeper/v3/apis/config/v1alpha1"
	syncsetv1alpha1 "github.com/open-policy-agent/gatekeeper/v3/apis/syncset/v1alpha1"
	"github.com/open-policy-agent/gatekeeper/v3/pkg/controller/config/process"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/runtime/schema"

	"github.com/tollgate-dev/tollgate/internal/admissionpolicy"
)

// ConfigGroup is the API group of Gatekeeper's Config.
const ConfigGroup = "config.gatekeeper.sh"

// ConfigName is the one Config Gatekeeper reads (in its own namespace);
// it ignores any other.
const ConfigName = "config"

// Config is Gatekeeper's Config: the namespaces each Gatekeeper process
// leaves alone (spec.match), and the kinds it syncs into data.inventory
// (spec.sync.syncOnly).
type Config struct {
	// SyncOnly are the kinds Gatekeeper would sync for referential
	// templates.
	SyncOnly []schema.GroupVersionKind
	excluder *process.Excluder
}

// IsConfig tells whether a JSON document is a Gatekeeper Config.
func IsConfig(js []byte) bool {
	t := typeOf(js)
	return t.group() == ConfigGroup && t.Kind == "Config"
}

// DecodeConfig reads a Config strictly. Gatekeeper reads only the one
// named config: another name is an error, not a Config silently unused.
func DecodeConfig(js []byte) (*Config, error) {
	var c configv1alpha1.Config
	if err := decodeStrict(js, &c); err != nil {
		return nil, fmt.Errorf("invalid Config: %w", err)
	}
	if c.APIVersion != ConfigGroup+"/v1alpha1" {
		return nil, fmt.Errorf("config: apiVersion %s is not one Gatekeeper serves (%s/v1alpha1)", c.APIVersion, ConfigGroup)
	}
	if c.Name != ConfigName {
		return nil, fmt.Errorf("config %q: Gatekeeper reads only the Config named %q and would ignore this one", c.Name, ConfigName)
	}
	for i, m := range c.Spec.Match {
		for _, p := range m.Processes {
			switch process.Process(p) {
			case process.Star, process.Audit, process.Webhook, process.Mutation, process.Sync:
			default:
				return nil, fmt.Errorf("config: spec.match[%d].processes: %q is not a Gatekeeper process (*, audit, webhook, mutation-webhook, sync)", i, p)
			}
		}
	}
	out := &Config{excluder: process.New()}
	out.excluder.Add(c.Spec.Match)
	for _, s := range c.Spec.Sync.SyncOnly {
		out.SyncOnly = append(out.SyncOnly, s.ToGroupVersionKind())
	}
	return out, nil
}

// excluded tells whether the Config leaves an object alone at an
// enforcement point: a Namespace by its name, any other object by its
// namespace, as Gatekeeper's process excluder does. gator verify reads no
// Config.
func (c *Config) excluded(point string, gvk schema.GroupVersionKind, name, namespace string) bool {
	if c == nil || c.excluder == nil {
		return false
	}
	var p process.Process
	switch point {
	case Webhook:
		p = process.Webhook
	case Audit:
		p = process.Audit
	default:
		return false
	}
	obj := &unstructured.Unstructured{}
	obj.SetGroupVersionKind(gvk)
	obj.SetName(name)
	obj.SetNamespace(namespace)
	ex, err := c.excluder.IsNamespaceExcluded(p, obj)
	return err == nil && ex
}

// SyncSetGroup is the API group of Gatekeeper's SyncSets.
const SyncSetGroup = "syncset.gatekeeper.sh"

// IsSyncSet tells whether a JSON document is a Gatekeeper SyncSet.
func IsSyncSet(js []byte) bool {
	t := typeOf(js)
	return t.group() == SyncSetGroup && t.Kind == "SyncSet"
}

// DecodeSyncSet reads a SyncSet strictly and gives the kinds it syncs.
// Gatekeeper syncs what every SyncSet and the Config's syncOnly name.
func DecodeSyncSet(js []byte) ([]schema.GroupVersionKind, error) {
	var s syncsetv1alpha1.SyncSet
	if err := decodeStrict(js, &s); err != nil {
		return nil, fmt.Errorf("invalid SyncSet: %w", err)
	}
	if s.APIVersion != SyncSetGroup+"/v1alpha1" {
		return nil, fmt.Errorf("syncset %q: apiVersion %s is not one Gatekeeper serves (%s/v1alpha1)", s.Name, s.APIVersion, SyncSetGroup)
	}
	var out []schema.GroupVersionKind
	for _, g := range s.Spec.GVKs {
		out = append(out, schema.GroupVersionKind{Group: g.Group, Version: g.Version, Kind: g.Kind})
	}
	return out, nil
}

// WithSyncs is the Config (nil for none: no exclusions) also syncing the
// kinds of SyncSets, each once.
func (c *Config) WithSyncs(gvks []schema.GroupVersionKind) *Config {
	out := &Config{}
	if c != nil {
		out.excluder = c.excluder
		out.SyncOnly = append(out.SyncOnly, c.SyncOnly...)
	}
	for _, g := range gvks {
		if !slices.Contains(out.SyncOnly, g) {
			out.SyncOnly = append(out.SyncOnly, g)
		}
	}
	return out
}

// decodeStrict reads JSON into v, refusing unknown and duplicate fields,
// with the project's strict decoder.
func decodeStrict(js []byte, v any) error {
	return admissionpolicy.DecodeStrict(js, v).ToAggregate()
}
