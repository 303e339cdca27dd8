// Package staticmanifests owns tollgate's webhook configurations as the
// kube-apiserver's static admission manifests (KEP-5793, the
// ManifestBasedAdmissionControlConfig feature gate, alpha in 1.36, beta and
// on by default in 1.37): the reserved name suffix, the directory layout the
// apiserver reads, writing the files so that the apiserver never reads half
// of one, checking them with the apiserver's own loader, and the
// AdmissionConfiguration that points the apiserver at them.
package staticmanifests

import (
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"strings"

	admissionregistrationv1 "k8s.io/api/admissionregistration/v1"
	"k8s.io/apiserver/pkg/admission/plugin/manifest"
	webhookloader "k8s.io/kubernetes/pkg/admission/plugin/webhook/manifest/loader"

	"github.com/tollgate-dev/tollgate/internal/registration"
)

// Suffix ends the name of every static configuration; the apiserver refuses
// it for configurations created through the API.
const Suffix = manifest.StaticConfigSuffix

// The subdirectories of the manifest directory, one per admission plugin:
// each plugin's staticManifestsDir accepts only its own kind, so the two
// cannot share a directory.
const (
	MutatingDir   = "mutating"
	ValidatingDir = "validating"
)

// The admission plugins that read the two directories.
const (
	MutatingPlugin   = "MutatingAdmissionWebhook"
	ValidatingPlugin = "ValidatingAdmissionWebhook"
)

// Name is the static name of the configurations named name: name with the
// reserved suffix, unless it has it already.
func Name(name string) string {
	if strings.HasSuffix(name, Suffix) {
		return name
	}
	return name + Suffix
}

// File is one configuration file written or removed.
type File struct {
	Path string
	// Kind and Name are the configuration's; Webhooks its entries. Removed
	// says the file was deleted because no policy needs that kind.
	Kind, Name string
	Webhooks   int
	Removed    bool
}

// Write makes dir/mutating/FILE and dir/validating/FILE, FILE being base
// plus ".yaml", hold the two configurations (renamed with Suffix), or
// removes the one whose configuration is nil; every other file in dir is
// left alone. Each directory is first loaded as it will be by the
// apiserver's own loader, in a copy (another file there may clash with
// ours), and nothing is written if it refuses; then the file is replaced
// in one rename, so the apiserver's watch never reads half of one.
func Write(dir, base string, mutating *admissionregistrationv1.MutatingWebhookConfiguration, validating *admissionregistrationv1.ValidatingWebhookConfiguration) ([]File, error) {
	if base == "" || strings.ContainsAny(base, `/\`) || strings.HasPrefix(base, ".") {
		return nil, fmt.Errorf("file name %q: want a plain name", base)
	}
	file := base + ".yaml"
	var out []File
	if mutating != nil {
		mutating = mutating.DeepCopy()
		mutating.Name = Name(mutating.Name)
		mutating.Annotations = nil // cert-manager's injection writes API objects only
	}
	f, err := place(filepath.Join(dir, MutatingDir), file, "MutatingWebhookConfiguration", mutating, loadMutating)
	if err != nil {
		return out, err
	}
	if mutating != nil {
		f.Name, f.Webhooks = mutating.Name, len(mutating.Webhooks)
	}
	out = append(out, f)
	if validating != nil {
		validating = validating.DeepCopy()
		validating.Name = Name(validating.Name)
		validating.Annotations = nil
	}
	f, err = place(filepath.Join(dir, ValidatingDir), file, "ValidatingWebhookConfiguration", validating, loadValidating)
	if err != nil {
		return out, err
	}
	if validating != nil {
		f.Name, f.Webhooks = validating.Name, len(validating.Webhooks)
	}
	return append(out, f), nil
}

// Load checks dir as the apiserver's two plugins read it and returns what
// they would load.
func Load(dir string) ([]*admissionregistrationv1.MutatingWebhookConfiguration, []*admissionregistrationv1.ValidatingWebhookConfiguration, error) {
	m, err := webhookloader.LoadMutatingManifests(filepath.Join(dir, MutatingDir))
	if err != nil {
		return nil, nil, fmt.Errorf("the apiserver's loader: %w", err)
	}
	v, err := webhookloader.LoadValidatingManifests(filepath.Join(dir, ValidatingDir))
	if err != nil {
		return nil, nil, fmt.Errorf("the apiserver's loader: %w", err)
	}
	return m.Configurations, v.Configurations, nil
}

func loadMutating(dir string) error {
	_, err := webhookloader.LoadMutatingManifests(dir)
	return err
}

func loadValidating(dir string) error {
	_, err := webhookloader.LoadValidatingManifests(dir)
	return err
}

// place writes obj to dir/file, or removes dir/file when obj is nil, once
// load accepts the directory as it will be.
func place[T any](dir, file, kind string, obj *T, load func(dir string) error) (File, error) {
	path := filepath.Join(dir, file)
	f := File{Path: path, Kind: kind}
	if err := os.MkdirAll(dir, 0o755); err != nil {
		return f, fmt.Errorf("manifest directory: %w", err)
	}
	var data []byte
	if obj != nil {
		var err error
		if data, err = registration.YAML(obj); err != nil {
			return f, err
		}
	}
	if err := checkStaged(dir, file, data, load); err != nil {
		return f, err
	}
	if obj == nil {
		err := os.Remove(path)
		if err != nil && !errors.Is(err, os.ErrNotExist) {
			return f, fmt.Errorf("remove %s: %w", path, err)
		}
		f.Removed = err == nil
		return f, nil
	}
	// A name without .yaml, .yml or .json, which the apiserver skips.
	tmp, err := os.CreateTemp(dir, "."+file+".*.tmp")
	if err != nil {
		return f, fmt.Errorf("write %s: %w", path, err)
	}
	defer os.Remove(tmp.Name()) // gone after the rename
	_, err = tmp.Write(data)
	if err == nil {
		err = tmp.Chmod(0o644)
	}
	if cerr := tmp.Close(); err == nil {
		err = cerr
	}
	if err == nil {
		err = os.Rename(tmp.Name(), path)
	}
	if err != nil {
		return f, fmt.Errorf("write %s: %w", path, err)
	}
	return f, nil
}

// checkStaged loads, in a directory of its own, the files of dir the
// apiserver reads with dir/file replaced by data (left out when data is
// nil): the directory as it will be.
func checkStaged(dir, file string, data []byte, load func(dir string) error) error {
	stage, err := os.MkdirTemp("", "tollgate-static-")
	if err != nil {
		return err
	}
	defer os.RemoveAll(stage)
	entries, err := os.ReadDir(dir)
	if err != nil {
		return fmt.Errorf("manifest directory: %w", err)
	}
	for _, e := range entries {
		if e.IsDir() || e.Name() == file {
			continue
		}
		switch strings.ToLower(filepath.Ext(e.Name())) {
		case ".yaml", ".yml", ".json":
		default:
			continue
		}
		b, err := os.ReadFile(filepath.Join(dir, e.Name()))
		if err != nil {
			return err
		}
		if err := os.WriteFile(filepath.Join(stage, e.Name()), b, 0o600); err != nil {
			return err
		}
	}
	if data != nil {
		if err := os.WriteFile(filepath.Join(stage, file), data, 0o600); err != nil {
			return err
		}
	}
	if err := load(stage); err != nil {
		return fmt.Errorf("nothing written: the apiserver's loader would refuse %s: %w", dir, err)
	}
	return nil
}
