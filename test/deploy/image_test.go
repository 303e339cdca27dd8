package deploy

import (
	"os"
	"path/filepath"
	"strings"
	"testing"

	"sigs.k8s.io/yaml"
)

// deploy/ and the chart run the image make image builds: its repository
// and the release in VERSION as the tag (not latest, which kubelets pull
// Always and kind load image-archive cannot satisfy).
func TestDeployRunsTheImageMakeImageBuilds(t *testing.T) {
	b, err := os.ReadFile(filepath.Join(root, "VERSION"))
	if err != nil {
		t.Fatal(err)
	}
	want := "ghcr.io/tollgate-dev/tollgate:" + strings.TrimSpace(string(b))

	var images []string
	for key, obj := range kustomize(t, "deploy") {
		if !strings.HasPrefix(key, "Deployment/") {
			continue
		}
		spec := obj["spec"].(map[string]any)["template"].(map[string]any)["spec"].(map[string]any)
		for _, c := range spec["containers"].([]any) {
			images = append(images, c.(map[string]any)["image"].(string))
		}
	}
	if len(images) != 1 || images[0] != want {
		t.Errorf("deploy/ runs %q, want [%s]", images, want)
	}

	c, err := os.ReadFile(filepath.Join(chart, "Chart.yaml"))
	if err != nil {
		t.Fatal(err)
	}
	var meta struct {
		AppVersion string `json:"appVersion"`
	}
	if err := yaml.Unmarshal(c, &meta); err != nil {
		t.Fatal(err)
	}
	if got := "ghcr.io/tollgate-dev/tollgate:" + meta.AppVersion; got != want {
		t.Errorf("the chart's appVersion gives %s, want %s", got, want)
	}
}
