// Package deploy checks what deploy/ ships besides the kustomize base: that
// the Helm chart renders the same objects as the base, and that the Grafana
// dashboard and the alerts use only metrics tollgate exports.
package deploy

import (
	"fmt"
	"os/exec"
	"reflect"
	"regexp"
	"strings"
	"testing"

	appsv1 "k8s.io/api/apps/v1"
	apiextensionsv1 "k8s.io/apiextensions-apiserver/pkg/apis/apiextensions/v1"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/runtime/serializer"
	"k8s.io/client-go/kubernetes/scheme"
	"sigs.k8s.io/yaml"
)

// root is the repository, from this package's directory.
const root = "../.."

const chart = root + "/deploy/helm/tollgate"

// helmLabels are the labels the chart adds to every object and Pod template
// on top of deploy/'s; the comparison ignores them and helmAnnotations, and
// nothing else.
var helmLabels = map[string]bool{
	"helm.sh/chart":                true,
	"app.kubernetes.io/managed-by": true,
	"app.kubernetes.io/instance":   true,
	"app.kubernetes.io/version":    true,
	"app.kubernetes.io/part-of":    true,
	"app.kubernetes.io/component":  true,
}

// helmAnnotations are the annotations only Helm reads (the report CRDs are
// kept on helm uninstall).
var helmAnnotations = map[string]bool{"helm.sh/resource-policy": true}

// With its default values the chart renders deploy/ less the Namespace,
// which a Helm release cannot own (helm install stores the release in it
// first); namespace.create=true renders it too.
func TestChartDefaultsRenderDeploy(t *testing.T) {
	helmBinary(t)
	want := kustomize(t, "deploy")
	const ns = "Namespace/<nil>/tollgate-system"
	if _, ok := want[ns]; !ok {
		t.Fatalf("deploy/ has no %s", ns)
	}
	t.Run("defaults", func(t *testing.T) {
		w := map[string]map[string]any{}
		for k, v := range want {
			if k != ns {
				w[k] = v
			}
		}
		compare(t, w, helmTemplate(t))
	})
	t.Run("namespace.create", func(t *testing.T) {
		compare(t, want, helmTemplate(t, "--set", "namespace.create=true"))
	})
}

// certificates.source=cert-manager renders deploy/cert-manager.
func TestChartCertManagerRendersOverlay(t *testing.T) {
	helmBinary(t)
	compare(t, kustomize(t, "deploy/cert-manager"), helmTemplate(t, "--set", "certificates.source=cert-manager", "--set", "namespace.create=true"))
}

// metrics.prometheusRule and metrics.grafanaDashboard render deploy/monitoring
// (the chart's files/ hold copies).
func TestChartMonitoringRendersDeployMonitoring(t *testing.T) {
	helmBinary(t)
	compare(t, kustomize(t, "deploy/monitoring"), helmTemplate(t, "--show-only", "templates/monitoring.yaml",
		"--set", "metrics.prometheusRule.enabled=true", "--set", "metrics.grafanaDashboard.enabled=true"))
}

// references.resources from deploy/references/values.yaml renders
// deploy/references.
func TestChartReferencesRendersDeployReferences(t *testing.T) {
	helmBinary(t)
	compare(t, kustomize(t, "deploy/references"), helmTemplate(t, "--show-only", "templates/references.yaml",
		"-f", root+"/deploy/references/values.yaml"))
}

// registryCredentials=pullSecrets renders deploy/registry-credentials,
// and the flag that uses it.
func TestChartRegistryCredentialsRendersOverlay(t *testing.T) {
	helmBinary(t)
	compare(t, kustomize(t, "deploy/registry-credentials"), helmTemplate(t, "--show-only", "templates/registrycredentials.yaml",
		"--set", "registryCredentials=pullSecrets"))
	for value, want := range map[string]bool{"pullSecrets": true, "anonymous": false} {
		out := helmTemplate(t, "--show-only", "templates/deployment.yaml", "--set", "registryCredentials="+value)
		if got := strings.Contains(fmt.Sprint(out), "--registry-credentials=pull-secrets"); got != want {
			t.Errorf("registryCredentials=%s: the flag rendered %t, want %t", value, got, want)
		}
	}
}

// values.schema.json turns a typo into an error.
func TestChartSchemaRejectsTypos(t *testing.T) {
	h := helmBinary(t)
	for _, set := range []string{"replcias=5", "image.pullPolicy=always", "certificates.source=selfsigned", "policies.source=inlined", "logLevel=verbose", "metrics.serviceMonitor.enable=true", "failurePolicy=Sometimes", "excludedNamespaces[0]=Not_A_Namespace", "backgroundAudit.reportsAPI=policyreport", "backgroundAudit.installCRD=false"} {
		args := []string{"template", "tollgate", chart, "--set", set}
		out, err := exec.Command(h, args...).CombinedOutput()
		if err == nil {
			t.Errorf("helm %s: accepted", strings.Join(args, " "))
			continue
		}
		if !strings.Contains(string(out), "values don't meet the specifications of the schema") {
			t.Errorf("helm %s: failed but not on the schema:\n%s", strings.Join(args, " "), out)
		}
	}
}

// Non-default values render what they say.
func TestChartValues(t *testing.T) {
	objs := helmTemplate(t,
		"--set", "replicas=5",
		"--set", "certificates.source=existingSecret", "--set", "certificates.existingSecret=my-tls",
		"--set", "policies.source=existingConfigMap", "--set", "policies.existingConfigMap=my-policies",
		"--set", "logLevel=debug", "--set", "metrics.serviceMonitor.enabled=true",
		"--set", "failurePolicy=Ignore", "--set", "excludedNamespaces={legacy,sandbox}",
		"--set", "nodeSelector.pool=system", "--set", "image.tag=v1.2.3", "--set", "image.pullPolicy=IfNotPresent")
	d := objs["Deployment/tollgate-system/tollgate"]
	if d == nil {
		t.Fatal("no Deployment")
	}
	spec := d["spec"].(map[string]any)
	pod := spec["template"].(map[string]any)["spec"].(map[string]any)
	c := pod["containers"].([]any)[0].(map[string]any)
	got := show(map[string]any{
		"replicas": spec["replicas"], "args": c["args"], "image": c["image"], "pullPolicy": c["imagePullPolicy"],
		"volumes": pod["volumes"], "nodeSelector": pod["nodeSelector"],
	})
	want := strings.TrimSpace(`
args:
- serve
- --config=/etc/tollgate/policies
- --cert-source=files
- --tls-cert-file=/etc/tollgate/tls/tls.crt
- --tls-private-key-file=/etc/tollgate/tls/tls.key
- --ca-file=/etc/tollgate/tls/ca.crt
- --listen=:8443
- --metrics-listen=:9090
- --log-level=debug
- --failure-policy=Ignore
- --exclude-namespaces=legacy,sandbox
image: ghcr.io/tollgate-dev/tollgate:v1.2.3
nodeSelector:
  pool: system
pullPolicy: IfNotPresent
replicas: 5
volumes:
- configMap:
    name: my-policies
  name: policies
- name: tls
  secret:
    secretName: my-tls`)
	if got != want {
		t.Errorf("Deployment:\n%s\nwant:\n%s", got, want)
	}
	if _, ok := objs["ConfigMap/tollgate-system/tollgate-policies"]; ok {
		t.Error("a policies ConfigMap besides the existing one")
	}
	if _, ok := objs["ServiceMonitor/tollgate-system/tollgate"]; !ok {
		t.Error("no ServiceMonitor")
	}
}

// TestChartNonDefaultValuesDecodeStrictly renders the chart with values other
// than the defaults and decodes every Kubernetes object strictly into its Go
// type (unknown or duplicate fields, wrong types fail). make e2e also has a
// real apiserver accept them in a server-side dry run.
func TestChartNonDefaultValuesDecodeStrictly(t *testing.T) {
	sch := runtime.NewScheme()
	for _, add := range []func(*runtime.Scheme) error{scheme.AddToScheme, apiextensionsv1.AddToScheme} {
		if err := add(sch); err != nil {
			t.Fatal(err)
		}
	}
	decoder := serializer.NewCodecFactory(sch, serializer.EnableStrict).UniversalDeserializer()
	for name, values := range NonDefaultValues(root) {
		t.Run(name, func(t *testing.T) {
			args := append([]string{"template", "tollgate", chart, "--namespace", "tollgate-system"}, values...)
			stream := run(t, helmBinary(t), args...)
			kinds := map[string]int{}
			for _, doc := range regexp.MustCompile(`(?m)^---.*$`).Split(string(stream), -1) {
				j, err := yaml.YAMLToJSON([]byte(doc))
				if err != nil {
					t.Fatal(err)
				}
				if string(j) == "null" {
					continue
				}
				if strings.Contains(string(j), `"apiVersion":"cert-manager.io/`) || strings.Contains(string(j), `"apiVersion":"monitoring.coreos.com/`) {
					kinds["(CRD)"]++
					continue
				}
				obj, gvk, err := decoder.Decode(j, nil, nil)
				if err != nil {
					t.Errorf("%v\n%s", err, doc)
					continue
				}
				kinds[gvk.Kind]++
				if d, ok := obj.(*appsv1.Deployment); ok && strings.Contains(name, "5 replicas") && *d.Spec.Replicas != 5 {
					t.Errorf("replicas %d", *d.Spec.Replicas)
				}
			}
			if kinds["Deployment"] != 1 || kinds["ServiceAccount"] != 1 || kinds["CustomResourceDefinition"] != 2 {
				t.Errorf("objects: %v", kinds)
			}
			t.Logf("%v", kinds)
		})
	}
}

// backgroundAudit values choose the report CRDs (deploy/crds/'s), the report
// rule of the ClusterRole and the flags.
func TestChartBackgroundAudit(t *testing.T) {
	helmBinary(t)
	wg := kustomize(t, "deploy/crds/wgpolicyk8s")
	for name, tt := range map[string]struct {
		set      []string
		crds     map[string]map[string]any // kind/namespace/name: object, compared by spec
		rule     string                    // the reports rule's apiGroup, "" for none
		arg      string                    // in the args, "" for none of the two
		otherArg string                    // not in the args
		noVAPs   bool                      // no rule on the cluster's ValidatingAdmissionPolicies
	}{
		"defaults":        {crds: kustomize(t, "deploy/crds/openreports"), rule: "openreports.io", otherArg: "--reports-api"},
		"wgpolicyk8s":     {set: []string{"backgroundAudit.reportsAPI=wgpolicyk8s"}, crds: wg, rule: "wgpolicyk8s.io", arg: "--reports-api=wgpolicyk8s"},
		"no CRDs":         {set: []string{"backgroundAudit.reportsAPI=wgpolicyk8s", "backgroundAudit.installCRDs=false"}, rule: "wgpolicyk8s.io", arg: "--reports-api=wgpolicyk8s"},
		"audit disabled":  {set: []string{"backgroundAudit.enabled=false"}, arg: "--background-audit=false"},
		"disabled, wgpol": {set: []string{"backgroundAudit.enabled=false", "backgroundAudit.reportsAPI=wgpolicyk8s"}, arg: "--background-audit=false", otherArg: "--reports-api"},
		"no cluster VAPs": {set: []string{"backgroundAudit.clusterPolicies=false"}, crds: kustomize(t, "deploy/crds/openreports"), rule: "openreports.io", arg: "--audit-cluster-policies=false", noVAPs: true},
	} {
		t.Run(name, func(t *testing.T) {
			var args []string
			for _, s := range tt.set {
				args = append(args, "--set", s)
			}
			objs := helmTemplate(t, args...)
			got := map[string]map[string]any{}
			for k, o := range objs {
				if o["kind"] == "CustomResourceDefinition" {
					got[k] = map[string]any{"spec": o["spec"]}
				}
			}
			want := map[string]map[string]any{}
			for k, o := range tt.crds {
				want[k] = map[string]any{"spec": o["spec"]}
			}
			compare(t, want, got)
			var groups []string
			vaps := false
			for _, r := range objs["ClusterRole/<nil>/tollgate"]["rules"].([]any) {
				if strings.Contains(show(r.(map[string]any)["resources"]), "validatingadmissionpolicies") {
					vaps = true
				}
				for _, g := range r.(map[string]any)["apiGroups"].([]any) {
					if strings.HasSuffix(g.(string), "reports.io") || g == "wgpolicyk8s.io" {
						groups = append(groups, g.(string))
					}
				}
			}
			if want := []string{tt.rule}; (tt.rule == "" && len(groups) > 0) || (tt.rule != "" && !reflect.DeepEqual(groups, want)) {
				t.Errorf("report rules for %v, want %q", groups, tt.rule)
			}
			if wantVAPs := tt.rule != "" && !tt.noVAPs; vaps != wantVAPs {
				t.Errorf("a rule on validatingadmissionpolicies: %v, want %v", vaps, wantVAPs)
			}
			c := objs["Deployment/tollgate-system/tollgate"]["spec"].(map[string]any)["template"].(map[string]any)["spec"].(map[string]any)["containers"].([]any)[0].(map[string]any)
			a := show(c["args"])
			if tt.arg != "" && !strings.Contains(a, tt.arg) {
				t.Errorf("args without %s:\n%s", tt.arg, a)
			}
			if tt.otherArg != "" && strings.Contains(a, tt.otherArg) {
				t.Errorf("args with %s:\n%s", tt.otherArg, a)
			}
		})
	}
}
