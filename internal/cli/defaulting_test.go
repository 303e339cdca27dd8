package cli

import (
	"path/filepath"
	"strings"
	"testing"
)

// scratchPod has a volume that names no source: the apiserver defaults it
// to an emptyDir before admission, so Pod Security's restricted volume
// types allow it.
const scratchPod = `apiVersion: v1
kind: Pod
metadata: {name: scratch, namespace: shop}
spec:
  containers: [{name: app, image: "app:1"}]
  volumes: [{name: scratch}]
`

// TestCheckDefaulted: check and test decide the object as the apiserver
// hands it to admission, defaulted, as a user runs them.
func TestCheckDefaulted(t *testing.T) {
	dir := t.TempDir()
	volumes := "../../policies/restrict-volume-types.yaml"
	pod := write(t, dir, "pod.yaml", scratchPod)
	deployment := write(t, dir, "deployment.yaml", `apiVersion: apps/v1
kind: Deployment
metadata: {name: web, namespace: shop}
spec:
  selector: {matchLabels: {app: web}}
  template:
    metadata: {labels: {app: web}}
    spec:
      containers: [{name: web, image: "web:1"}]
      volumes: [{name: cache}]
`)
	hostPath := write(t, dir, "hostpath.yaml", strings.Replace(scratchPod, "{name: scratch}]", "{name: scratch, hostPath: {path: /var}}]", 1))
	typo := write(t, dir, "typo.yaml", scratchPod+"  restartPolicey: Never\n")
	badType := write(t, dir, "badtype.yaml", strings.Replace(scratchPod, `[{name: app, image: "app:1"}]`, `[{name: app, image: "app:1", ports: [{containerPort: "80"}]}]`, 1))
	good := write(t, dir, "good.yaml", strings.SplitN(pods, "---\n", 2)[0])
	nsFile := write(t, dir, "ns.yaml", "apiVersion: v1\nkind: Namespace\nmetadata: {name: shop, labels: {sidecar-injection: enabled}}\n")
	tests := []struct {
		name           string
		args           []string
		code           int
		stdout, stderr []string
		absent         []string
	}{
		{"volume without a source is an emptyDir", []string{"check", "-c", volumes, "-f", pod}, 0,
			[]string{"Pod shop/scratch", "restrict-volume-types", "1 pass, 0 fail"}, nil, nil},
		{"in a Pod template too", []string{"check", "-c", volumes, "-f", deployment}, 0,
			[]string{"Deployment shop/web", "1 pass, 0 fail"}, nil, nil},
		{"a hostPath volume is still refused", []string{"check", "-c", volumes, "-f", hostPath}, 1,
			[]string{`volume "scratch" must be of type`, "1 fail"}, nil, nil},
		{"an unknown field is dropped with the apiserver's warning", []string{"check", "-c", volumes, "-f", typo}, 0,
			[]string{"1 pass"}, []string{"Warning: " + typo + `:1 Pod shop/scratch: unknown field "spec.restartPolicey"`}, nil},
		{"a value of the wrong type names the field", []string{"check", "-c", volumes, "-f", badType}, 2,
			[]string{`Pod in version "v1" cannot be handled as a Pod`, "spec.containers.ports.containerPort"}, nil, nil},
		// The diff is what the policies changed, not the defaults.
		{"patches leave the defaults out", []string{"check", "-f", good, "--namespaces", nsFile, "--show-patches"}, 0,
			[]string{"+  - image: nginx:1.12.2", "   restartPolicy: Always"}, nil, []string{"+  restartPolicy", "+  dnsPolicy"}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			code, out, errs := run(tt.args...)
			if code != tt.code {
				t.Fatalf("exit %d, want %d\nstdout:\n%s\nstderr:\n%s", code, tt.code, out, errs)
			}
			for _, c := range tt.stdout {
				if !strings.Contains(out, c) {
					t.Errorf("stdout lacks %q:\n%s", c, out)
				}
			}
			for _, c := range tt.stderr {
				if !strings.Contains(errs, c) {
					t.Errorf("stderr lacks %q:\n%s", c, errs)
				}
			}
			for _, a := range tt.absent {
				if strings.Contains(out, a) {
					t.Errorf("stdout has %q:\n%s", a, out)
				}
			}
		})
	}
}

// TestTestDefaulted: tollgate test decides the suite's resources defaulted.
func TestTestDefaulted(t *testing.T) {
	dir := t.TempDir()
	volumes, err := filepath.Abs("../../policies/restrict-volume-types.yaml")
	if err != nil {
		t.Fatal(err)
	}
	write(t, dir, "pod.yaml", scratchPod)
	write(t, dir, "tollgate-test.yaml", `apiVersion: tollgate.dev/v1alpha1
kind: Test
metadata: {name: defaulted}
policies: [`+volumes+`]
resources: [pod.yaml]
results:
- policy: restrict-volume-types
  resources: [shop/scratch]
  result: pass
`)
	code, out, errs := run("test", dir)
	if code != 0 || !strings.Contains(out, "1 checks, 0 failed") {
		t.Errorf("exit %d\n%s%s", code, out, errs)
	}
}
