package cel_test

import (
	"encoding/json"
	"strings"
	"sync"
	"testing"
)

var (
	fuzzOnce     sync.Once
	fuzzPrograms []named
)

// addPodSeeds adds the seeds of the fuzz targets that generate Pods.
func addPodSeeds(f *testing.F) {
	f.Add(uint64(0), int64(0), "app", "registry.k8s.io/pause:3.9")
	f.Add(^uint64(0), int64(1000), "x", "docker.io/library/nginx:latest")
	f.Add(uint64(0x5a5a5a5a5a5a5a5a), int64(-1), "", "registry.example.com/app@sha256:0123")
	f.Add(uint64(0xa5a5a5a5a5a5a5a5), int64(65536), "debug", "")
	f.Add(uint64(0xc000000200000481), int64(39), "NET_BIND_SERVICE", "SYS_ADMIN") // many adds
}

// fuzzCorpus is every library and corpus program but budget.yaml's
// (each costs a second), and refinedPrograms, loaded once.
func fuzzCorpus(t testing.TB) []named {
	fuzzOnce.Do(func() {
		for _, p := range append(append(libraryPrograms(t), corpusPrograms(t)...), refinedPrograms(t)...) {
			if !strings.HasPrefix(p.name, "budget.yaml: ") {
				fuzzPrograms = append(fuzzPrograms, p)
			}
		}
	})
	return fuzzPrograms
}

// FuzzEvaluateAsReference generates Pods from the fuzzer's bits, numbers
// and strings, with the fields the library's policies read, and requires
// Evaluate to decide every library and corpus policy as the apiserver's
// validator does, and the direct evaluator's every value to be cel-go's.
func FuzzEvaluateAsReference(f *testing.F) {
	addPodSeeds(f)
	f.Fuzz(func(t *testing.T, bits uint64, n int64, name, image string) {
		js, err := json.Marshal(generatedPod(bits, n, name, image))
		if err != nil {
			t.Fatal(err)
		}
		compare(t, fuzzCorpus(t), string(js), podInput(t, js))
		checkDirect(t, fuzzCorpus(t), string(js), podInput(t, js))
	})
}

// generatedPod is a Pod whose security-relevant fields each bit sets or
// leaves out, with n as the numbers and name and image as the strings.
func generatedPod(bits uint64, n int64, name, image string) map[string]any {
	bit := func(i int) bool { return bits&(1<<i) != 0 }
	pick := func(i int, values ...any) any { return values[int(bits>>i)%len(values)] }
	sc := map[string]any{}
	if bit(0) {
		sc["privileged"] = bit(1)
	}
	if bit(2) {
		sc["allowPrivilegeEscalation"] = bit(3)
	}
	if bit(4) {
		sc["runAsNonRoot"] = bit(5)
	}
	if bit(6) {
		sc["runAsUser"] = n
	}
	if bit(7) {
		add := []any{pick(10, "NET_BIND_SERVICE", "SYS_ADMIN", name)}
		if bit(62) { // many: what the capabilities policies' messages list
			for range (n%40+40)%40 + 1 {
				add = append(add, pick(63, "NET_BIND_SERVICE", image))
			}
		}
		sc["capabilities"] = map[string]any{"drop": []any{pick(8, "ALL", "NET_RAW", name)}, "add": add}
	}
	if bit(12) {
		sc["seccompProfile"] = map[string]any{"type": pick(13, "RuntimeDefault", "Localhost", "Unconfined", name)}
	}
	if bit(15) {
		sc["procMount"] = pick(16, "Default", "Unmasked", name)
	}
	if bit(18) {
		sc["seLinuxOptions"] = map[string]any{"type": pick(19, "container_t", "spc_t", name), "user": pick(21, "", name)}
	}
	if bit(22) {
		sc["appArmorProfile"] = map[string]any{"type": pick(23, "RuntimeDefault", "Unconfined", "Localhost")}
	}
	if bit(25) {
		sc["windowsOptions"] = map[string]any{"hostProcess": bit(26)}
	}
	c := map[string]any{"name": name, "image": image, "securityContext": sc}
	if bit(27) {
		c["ports"] = []any{map[string]any{"containerPort": int64(80), "hostPort": n}}
	}
	if bit(28) {
		c["resources"] = map[string]any{"limits": map[string]any{"memory": "128Mi", "cpu": "1"}, "requests": map[string]any{"memory": "64Mi"}}
	}
	if bit(29) {
		c["livenessProbe"] = map[string]any{"httpGet": map[string]any{"host": pick(30, "", name), "port": int64(8080)}}
	}
	if bit(31) {
		c["readinessProbe"] = map[string]any{"tcpSocket": map[string]any{"port": int64(8080)}}
	}
	spec := map[string]any{"containers": []any{c}}
	if bit(32) {
		spec["initContainers"] = []any{map[string]any{"name": "init-" + name, "image": image, "securityContext": map[string]any{"privileged": bit(33)}}}
	}
	if bit(34) {
		spec["ephemeralContainers"] = []any{map[string]any{"name": "eph", "image": image}}
	}
	for i, f := range []string{"hostNetwork", "hostPID", "hostIPC", "hostUsers"} {
		if bit(35 + 2*i) {
			spec[f] = bit(36 + 2*i)
		}
	}
	if bit(43) {
		spec["volumes"] = []any{map[string]any{"name": "v", pick(44, "hostPath", "emptyDir", "configMap", name).(string): map[string]any{"path": "/"}}}
	}
	psc := map[string]any{}
	if bit(46) {
		psc["runAsNonRoot"] = bit(47)
	}
	if bit(48) {
		psc["seccompProfile"] = map[string]any{"type": pick(49, "RuntimeDefault", "Unconfined", "Localhost")}
	}
	if bit(51) {
		psc["sysctls"] = []any{map[string]any{"name": pick(52, "kernel.shm_rmid_forced", "net.ipv4.ip_forward", name), "value": "1"}}
	}
	if bit(54) {
		psc["runAsUser"] = n
	}
	if len(psc) > 0 {
		spec["securityContext"] = psc
	}
	meta := map[string]any{"name": "generated", "namespace": "shop"}
	if bit(55) {
		meta["labels"] = map[string]any{pick(56, "app.kubernetes.io/name", "exempt", name).(string): image}
	}
	if bit(58) {
		meta["annotations"] = map[string]any{"container.apparmor.security.beta.kubernetes.io/" + name: pick(59, "runtime/default", "unconfined", "localhost/x")}
	}
	return map[string]any{"apiVersion": "v1", "kind": "Pod", "metadata": meta, "spec": spec}
}
