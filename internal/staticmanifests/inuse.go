package staticmanifests

import (
	"bufio"
	"bytes"
	"context"
	"fmt"
	"path/filepath"
	"regexp"
	"strings"

	"k8s.io/apiserver/pkg/admission/plugin/manifest"
	"k8s.io/client-go/rest"
)

// ConfigInfoMetric is the apiserver's metric that gives, per admission
// plugin, the hash of the static manifest files it last loaded (empty for
// a directory without any).
const ConfigInfoMetric = "apiserver_manifest_admission_config_controller_last_config_info"

var (
	pluginLabel = regexp.MustCompile(`[{,]plugin="([^"]*)"`)
	hashLabel   = regexp.MustCompile(`[{,]hash="([^"]*)"`)
)

// Hashes are the hashes the apiserver will report in ConfigInfoMetric once
// it has loaded dir's two subdirectories as they are now, by plugin; a
// directory with no file the apiserver reads has none.
func Hashes(dir string) (map[string]string, error) {
	out := map[string]string{}
	for plugin, sub := range map[string]string{MutatingPlugin: MutatingDir, ValidatingPlugin: ValidatingDir} {
		_, hash, err := manifest.LoadFiles(filepath.Join(dir, sub))
		if err != nil {
			return nil, err
		}
		if hash != "" {
			out[plugin] = hash
		}
	}
	return out, nil
}

// Loaded reads the apiserver's /metrics through client and returns, by
// webhook plugin, the hash of the static manifests it has loaded; a plugin
// without any is absent. An apiserver without the feature, or whose
// plugins have no staticManifestsDir, gives an empty map.
func Loaded(ctx context.Context, client rest.Interface) (map[string]string, error) {
	body, err := client.Get().AbsPath("/metrics").DoRaw(ctx)
	if err != nil {
		return nil, fmt.Errorf("the apiserver's metrics: %w", err)
	}
	return parseLoaded(body), nil
}

func parseLoaded(metrics []byte) map[string]string {
	out := map[string]string{}
	sc := bufio.NewScanner(bytes.NewReader(metrics))
	sc.Buffer(make([]byte, 0, 64*1024), 1024*1024)
	for sc.Scan() {
		line := sc.Text()
		if !strings.HasPrefix(line, ConfigInfoMetric+"{") {
			continue
		}
		p, h := pluginLabel.FindStringSubmatch(line), hashLabel.FindStringSubmatch(line)
		if p == nil || h == nil || h[1] == "" {
			continue
		}
		if p[1] == MutatingPlugin || p[1] == ValidatingPlugin {
			out[p[1]] = h[1]
		}
	}
	return out
}
