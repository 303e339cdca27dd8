package main

import (
	"encoding/base64"
	"encoding/json"
	"fmt"
	"net/http"
	"strings"

	"github.com/tollgate-dev/tollgate/internal/jsonpatch"
	"github.com/tollgate-dev/tollgate/internal/policy"
)

// patchingFloor is floor answering with a fixed patch, the one tollgate's
// injection gives the Pods of the Pod-create runs (the set's injection
// items at the end of the Pod's lists, and the status annotation, the
// Pods having none): what it adds to a Pod create over the floor is the
// apiserver's own cost of a mutation, computed by whoever. Without
// injected, the patch adds the status annotation alone: the cost of any
// patch, apart from that of a larger Pod.
func patchingFloor(set *policy.Set, injected bool) (http.Handler, error) {
	var patch jsonpatch.Patch
	var names []string
	for _, p := range set.Policies {
		in := p.Injection()
		if in == nil {
			continue
		}
		lists := []struct {
			list  string
			items []policy.Item
		}{{"containers", in.Containers}, {"volumes", in.Volumes}}
		if !injected {
			lists = nil
		}
		for _, l := range lists {
			for _, it := range l.items {
				patch = append(patch, jsonpatch.Add(jsonpatch.Pointer("spec", l.list, "-"), it.JSON))
			}
		}
		names = append(names, p.Name())
	}
	if len(names) != 1 {
		return nil, fmt.Errorf("want one injection policy, got %v", names)
	}
	status, err := json.Marshal(map[string]string{"tollgate.dev/status": names[0]})
	if err != nil {
		return nil, err
	}
	ops, err := json.Marshal(append(patch, jsonpatch.Add("/metadata/annotations", status)))
	if err != nil {
		return nil, err
	}
	encoded := base64.StdEncoding.EncodeToString(ops)
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		uid, ok := reviewUID(w, r)
		if !ok {
			return
		}
		answer := `"allowed":true`
		if strings.HasPrefix(r.URL.Path, "/mutate/") {
			answer += `,"patchType":"JSONPatch","patch":"` + encoded + `"`
		}
		w.Header().Set("Content-Type", "application/json")
		_, _ = w.Write([]byte(`{"apiVersion":"admission.k8s.io/v1","kind":"AdmissionReview","response":{"uid":` + string(uid) + `,` + answer + `}}`))
	}), nil
}
